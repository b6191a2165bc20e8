"""The /shared-state page's ingredient lines (dojo_pages/recipe.py): a dojo server's ``{icon, name, amount}``
records read and edited as ``name (amount)`` lines, the demo agent's strings as they are; saving keeps each
unchanged record whole and the shape the state had."""

from __future__ import annotations

from interrupt_chat.demo.dojo_pages.recipe import _ingredients, ingredient_line

SALT = {"icon": "🧂", "name": "Salt", "amount": "a pinch"}
LETTUCE = {"icon": "🥬", "name": "Lettuce leaves", "amount": ""}


def test_a_record_reads_as_name_and_amount_a_string_as_is():
    assert ingredient_line(SALT) == "Salt (a pinch)"
    assert ingredient_line(LETTUCE) == "Lettuce leaves"
    assert ingredient_line("flour") == "flour"


def test_unchanged_records_are_kept_whole_and_new_lines_become_records():
    saved = _ingredients(["Salt (a pinch)", "Lime (half)", "Basil", "Lettuce leaves"], [SALT, LETTUCE])
    assert saved == [SALT, {"icon": "", "name": "Lime", "amount": "half"}, {"icon": "", "name": "Basil", "amount": ""},
                     LETTUCE]


def test_strings_stay_strings():
    assert _ingredients(["flour", "milk (1 l)"], ["flour"]) == ["flour", "milk (1 l)"]
    assert _ingredients(["flour"], []) == ["flour"]
