"""The audit's hash chain (issue 44, contracts §6.5): canonical encoding, edits, deletions, reordering, appends."""

from __future__ import annotations

import copy

import pytest

from interrupt_chat.model import chain


def _chained(entries: list[dict]) -> list[dict]:
    previous, out = chain.GENESIS, []
    for entry in entries:
        entry = {**entry, "prev_hash": previous}
        entry["hash"] = previous = chain.entry_hash(previous, entry)
        out.append(entry)
    return out


ENTRIES = [{"id": i, "action": action, "thread_id": "t1", "payload": {"approved": action == "resolved"},
            "at": f"2026-12-05T10:0{i}:00+00:00"} for i, action in enumerate(["resolved", "rejected", "cancelled"], 1)]


def test_the_encoding_is_canonical_whatever_the_key_order_or_the_number_form():
    assert chain.canonical({"b": 1.0, "a": "é", "hash": "x"}) == chain.canonical({"a": "é", "b": 1, "prev_hash": "y"})
    assert chain.canonical({"a": [1, 2]}) == b'{"a":[1,2]}'


def test_a_chain_that_holds_counts_its_entries_and_names_its_head():
    found = chain.verify(_chained(ENTRIES))
    assert isinstance(found, chain.Verified) and found.count == 3 and len(found.head) == 64
    assert chain.verify([]) == chain.Verified(0, chain.GENESIS)


@pytest.mark.parametrize(("tamper", "first_bad"), [
    (lambda e: e[1]["payload"].update(approved=True), 2),  # an edit
    (lambda e: e.pop(1), 3),  # a deletion: the next one names a hash that is gone
    (lambda e: e.insert(0, e.pop(1)), 2),  # reordering
    (lambda e: e[0].update(action="resolved ", hash=chain.entry_hash(chain.GENESIS, {**e[0], "action": "resolved "})),
     2),  # an edit with its own hash recomputed: the next entry no longer follows it
])
def test_editing_deleting_or_reordering_breaks_the_chain_at_the_first_changed_entry(tamper, first_bad):
    entries = copy.deepcopy(_chained(ENTRIES))
    tamper(entries)
    found = chain.verify(entries)
    assert isinstance(found, chain.Broken) and found.entry_id == first_bad, found


def test_appending_is_what_the_chain_allows():
    entries = _chained(ENTRIES)
    more = {"id": 4, "action": "expired", "prev_hash": entries[-1]["hash"]}
    more["hash"] = chain.entry_hash(entries[-1]["hash"], more)
    found = chain.verify([*entries, more])
    assert isinstance(found, chain.Verified) and found.count == 4


def test_a_value_json_cannot_carry_canonically_is_named():
    entry = {"id": 1, "prev_hash": chain.GENESIS, "hash": "", "x": float("nan")}
    found = chain.verify([entry])
    assert isinstance(found, chain.Broken) and "canonical" in found.reason
