"""The audit's chain in the database (issue 44): appended under its lock, verified whole, broken by any edit."""

from __future__ import annotations

from sqlalchemy import text

from interrupt_chat.model import chain
from interrupt_chat.store import chain as store_chain
from tests.unit.tabs import database_fixture, page_fixture  # noqa: F401 - autouse fixtures


def _three(database) -> list[int]:
    return [database.record_decision("alice|chat", "t1", "r1", f"i{n}", "tool_call", action,
                                     {"approved": action == "resolved"}).id
            for n, action in enumerate(["resolved", "rejected", "cancelled"])]


def test_decisions_are_chained_and_verify(database):
    _three(database)
    found = store_chain.verify(database)
    assert isinstance(found, chain.Verified) and found.count == 3


def test_an_edit_or_a_deletion_in_the_database_breaks_the_chain_where_it_happened(database):
    first, second, third = _three(database)
    with database._engine.begin() as conn:
        conn.execute(text("UPDATE interrupt_chat_decisions SET action = 'resolved' WHERE id = :id"), {"id": second})
    found = store_chain.verify(database)
    assert isinstance(found, chain.Broken) and found.entry_id == second
    with database._engine.begin() as conn:
        conn.execute(text("UPDATE interrupt_chat_decisions SET action = 'rejected' WHERE id = :id"), {"id": second})
        conn.execute(text("DELETE FROM interrupt_chat_decisions WHERE id = :id"), {"id": first})
    found = store_chain.verify(database)
    assert isinstance(found, chain.Broken) and found.entry_id == second  # it names a hash that is gone
