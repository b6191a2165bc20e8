"""The app's side of people (``ic.People``, issue 41): checked input, the default routing, and the four-eyes rule."""

from __future__ import annotations

import pytest

import interrupt_chat as ic
from interrupt_chat.model.people import clean_assignees, may_decide

TEAM = ic.People([ic.Person("alice", roles=("staff",)), ic.Person("bob", "Bob", roles=("finance",)),
                  ic.Person("dave", roles=("finance",))])


@pytest.mark.parametrize("bad", [ic.Person("role:finance"), ic.Person("a b"), ic.Person("a|b"), ic.Person(""),
                                 "alice"])
def test_a_person_id_that_could_pass_for_a_role_or_a_key_is_refused(bad):
    with pytest.raises(TypeError):
        ic.People([bad])


def test_a_request_stays_with_its_asker_by_default_and_an_anonymous_one_with_nobody():
    assert TEAM.assignees(ic.Request("t", "i", "alice")) == ["alice"]
    assert TEAM.assignees(ic.Request("t", "i", "")) == []
    assert TEAM.needed(ic.Request("t", "i", "alice")) == 1 and TEAM.escalation(ic.Request("t", "i", "")) is None


def test_assignees_are_cleaned_and_bounded():
    assert clean_assignees(["bob", " bob ", "a b", "x|y", "role:", "role:finance", 7]) == ["bob", "role:finance", "7"]
    assert clean_assignees("bob") == ["bob"] and clean_assignees(None) == []
    assert len(clean_assignees([f"p{i}" for i in range(100)])) == 32


def test_the_askers_role_is_not_enough_four_eyes():
    assert not may_decide("bob", ("finance",), ["role:finance"], asker="bob")
    assert may_decide("bob", ("finance",), ["role:finance"], asker="bob", self_approval=True)
    assert may_decide("bob", ("finance",), ["bob"], asker="bob")  # named: a request that stays with its asker
    assert may_decide("dave", ("finance",), ["role:finance"], asker="bob")
    assert not may_decide("", (), [""], asker="")


def test_the_apps_functions_are_checked():
    with pytest.raises(TypeError):
        ic.People(assign="role:finance")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ic.People(approvals=lambda r: "2").needed(ic.Request("t", "i", "a"))  # type: ignore[arg-type, return-value]
    with pytest.raises(ValueError):
        ic.Escalation(remind_at=1.5)
    with pytest.raises(ValueError):
        ic.Escalation(escalate_at=0.8)  # to nobody
    assert ic.People(approvals=lambda r: 0).needed(ic.Request("t", "i", "a")) == 1
    assert TEAM.members("finance") == ["bob", "dave"] and TEAM.name("role:finance") == "finance"
    assert TEAM.name("bob") == "Bob" and TEAM.name("zed") == "zed"
