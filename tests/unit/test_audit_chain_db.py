"""The audit's chain in the database (issue 44): appended under its lock, verified whole, broken by any edit."""

from __future__ import annotations

import itertools

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
    first, second, _third = _three(database)
    with database._engine.begin() as conn:
        conn.execute(text("UPDATE interrupt_chat_decisions SET action = 'resolved' WHERE id = :id"), {"id": second})
    found = store_chain.verify(database)
    assert isinstance(found, chain.Broken) and found.entry_id == second
    with database._engine.begin() as conn:
        conn.execute(text("UPDATE interrupt_chat_decisions SET action = 'rejected' WHERE id = :id"), {"id": second})
        conn.execute(text("DELETE FROM interrupt_chat_decisions WHERE id = :id"), {"id": first})
    found = store_chain.verify(database)
    assert isinstance(found, chain.Broken) and found.entry_id == second  # it names a hash that is gone


def test_the_command_line_verifies_exports_and_checks_an_export_offline(database, tmp_path):
    import io
    import json
    import subprocess
    import sys
    from pathlib import Path

    from interrupt_chat.workers import audit_cli

    _three(database)
    url = str(database._engine.url)
    done = subprocess.run([sys.executable, "-m", "interrupt_chat", "audit", "verify", "--db", url],
                          capture_output=True, text=True, timeout=60, cwd=Path(__file__).parents[2])
    assert (done.returncode, done.stdout.strip()) == (0, "OK 3 entries"), done.stderr
    export = tmp_path / "audit.jsonl"
    assert audit_cli.main(["audit", "export", "--out", str(export), "--db", url], io.StringIO()) == 0
    lines = [json.loads(line) for line in export.read_text().splitlines()]
    assert len(lines) == 3 and all(line["hash"] and line["prev_hash"] for line in lines)
    assert "alice|chat" not in export.read_text()  # the owner key stays in the database (a digest is chained)
    said = io.StringIO()
    assert audit_cli.main(["audit", "verify", "--file", str(export)], said) == 0 and said.getvalue() == "OK 3 entries\n"
    lines[1]["payload"] = {"approved": True}
    export.write_text("".join(json.dumps(line) + "\n" for line in lines))
    said = io.StringIO()
    assert audit_cli.main(["audit", "verify", "--file", str(export)], said) == 1
    assert said.getvalue().startswith(f"BROKEN at entry {lines[1]['id']}:")


def test_a_database_from_before_the_chain_is_chained_once_at_upgrade(db_url):
    """Schema 5 (no chain columns, rows of its own) → 6: the old rows are chained in id order, then new ones follow."""
    from sqlalchemy import create_engine

    from interrupt_chat.store.threads_db import ThreadDB

    url = db_url
    old = ThreadDB(url)
    old.record_decision("alice|chat", "t1", "r1", "i1", "tool_call", "resolved")
    old.record_decision("bob|chat", "t2", "r2", "i2", "tool_call", "rejected")
    old.close()
    engine = create_engine(url)
    with engine.begin() as conn:  # as schema 5 left it: no chain columns
        for index in ("interrupt_chat_decisions_at", "interrupt_chat_decisions_tools",
                      "interrupt_chat_decisions_waits", "interrupt_chat_decisions_decider"):
            conn.execute(text(f"DROP INDEX {index}"))
        for column in ("hash", "prev_hash", "waited_ms", "tool", "decider", "owner_public"):
            conn.execute(text(f"ALTER TABLE interrupt_chat_decisions DROP COLUMN {column}"))
        conn.execute(text("UPDATE interrupt_chat_schema SET version = 5"))
    engine.dispose()
    upgraded = ThreadDB(url)
    try:
        found = store_chain.verify(upgraded)
        assert isinstance(found, chain.Verified) and found.count == 2
        upgraded.record_decision("alice|chat", "t1", "r3", "i3", "tool_call", "cancelled")
        found = store_chain.verify(upgraded)
        assert isinstance(found, chain.Verified) and found.count == 3
    finally:
        upgraded.close()


_WRITER = """
import sys, time
from pathlib import Path
from interrupt_chat.store import policies
from interrupt_chat.store.threads_db import ThreadDB
db = ThreadDB(sys.argv[1], busy_timeout=120)  # SQLite's busy handler is not fair: a loaded machine waits long
db.ensure_schema()
ready = Path(sys.argv[4])
(ready / sys.argv[2]).touch()
while not (ready / "go").exists():  # both start together (importing takes longer than writing)
    time.sleep(0.01)
for n in range(int(sys.argv[3])):
    if n % 10 == 9:  # rule events are chained too: made, and the one it replaces revoked
        policies.add(db, sys.argv[2] + "|chat", "tool", "always", "allow")
    db.record_decision(sys.argv[2] + "|chat", "t", "r", f"i{n}", "tool_call", "resolved", {"n": n})
db.close()
"""


def test_two_processes_appending_at_once_keep_one_chain(db_url, tmp_path):
    """Two writers (as two workers would) append at once: one chain, every entry in it (SQLite and PostgreSQL)."""
    import subprocess
    import sys
    import time

    from interrupt_chat.store.threads_db import ThreadDB

    ThreadDB(db_url).close()  # the schema first: both writers then only append
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, db_url, who, "150", str(tmp_path)])
               for who in ("alice", "bob")]
    deadline = time.monotonic() + 120
    while not all((tmp_path / who).exists() for who in ("alice", "bob")) and time.monotonic() < deadline:
        time.sleep(0.01)
    (tmp_path / "go").touch()
    assert [w.wait(timeout=300) for w in writers] == [0, 0]
    database = ThreadDB(db_url)
    try:
        found = store_chain.verify(database)
        # 150 decisions each, 15 rules made each, 14 of them replacing (revoking) the one before
        assert isinstance(found, chain.Verified) and found.count == 2 * (150 + 15 + 14), found
        with database._engine.begin() as conn:
            owners = conn.execute(text("SELECT owner FROM interrupt_chat_decisions ORDER BY id")).scalars().all()
        assert sorted(set(owners)) == ["alice|chat", "bob|chat"]
        switches = sum(1 for a, b in itertools.pairwise(owners) if a != b)
        if db_url.startswith("postgresql"):  # the advisory lock queues its waiters: the writers interleave
            assert switches > 1  # so the lock, not luck, kept the chain whole
        # (SQLite's busy handler is not fair: the writer holding the file often finishes first, the other waits)
    finally:
        database.close()


def test_entries_deleted_from_the_end_or_reordered_break_the_chain_too(database):
    first, second, third = _three(database)
    with database._engine.begin() as conn:
        conn.execute(text("DELETE FROM interrupt_chat_decisions WHERE id = :id"), {"id": third})
    found = store_chain.verify(database)  # what is left is a valid chain: the recorded head tells
    assert isinstance(found, chain.Broken) and found.entry_id == third, found
    database.record_decision("alice|chat", "t1", "r1", "i9", "tool_call", "resolved")  # appending does not hide it
    found = store_chain.verify(database)
    assert isinstance(found, chain.Broken), found
    with database._engine.begin() as conn:  # a swap of two entries' places
        conn.execute(text("UPDATE interrupt_chat_decisions SET id = -1 WHERE id = :id"), {"id": first})
        conn.execute(text("UPDATE interrupt_chat_decisions SET id = :a WHERE id = :b"), {"a": first, "b": second})
        conn.execute(text("UPDATE interrupt_chat_decisions SET id = :b WHERE id = -1"), {"b": second})
    found = store_chain.verify(database)
    assert isinstance(found, chain.Broken) and found.entry_id == first, found


def test_a_missing_database_file_is_an_error_not_an_empty_chain(tmp_path):
    import io

    from interrupt_chat.workers import audit_cli

    said = io.StringIO()
    assert audit_cli.main(["audit", "verify", "--db", f"sqlite:///{tmp_path / 'nowhere.db'}"], said) == 2
    assert not (tmp_path / "nowhere.db").exists()
