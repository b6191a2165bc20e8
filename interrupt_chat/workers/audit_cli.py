"""``python -m interrupt_chat audit verify | export``: the audit's chain checked, and written out (issue 44).

``audit verify [--db URL | --file FILE]`` prints ``OK <n> entries`` and exits 0, or prints the id of
the first entry that does not match (and why) and exits 1. ``audit export --out FILE [--db URL]``
writes every entry as JSON Lines with its ``hash`` and ``prev_hash``, which ``verify --file`` checks
offline. Without ``--db`` the app's own settings name the database (``INTERRUPT_CHAT_DB_URL``, else
the Reflex config's ``db_url``, else the default file), as the app itself would.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from ..model import chain
from ..store import chain as store_chain
from ..store.threads_db import DB_URL_ENV, ThreadDB, ThreadDBError, default_db_url

__all__ = ["main"]


def _url(given: str | None) -> str:
    if given:
        return given
    configured = os.environ.get(DB_URL_ENV, "").strip()
    if configured and configured.lower() != "off":
        return configured
    import reflex as rx  # the app's rxconfig.py, read from the working directory as `reflex run` does

    return default_db_url(getattr(rx.config.get_config(), "db_url", None))


def _missing_file(url: str) -> str:
    """A SQLite file that does not exist (opening it would make an empty database, and an empty chain)."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return ""
    name = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or not name or name == ":memory:" or name.startswith("file:"):
        return ""
    return "" if Path(name).exists() else name


def _file_lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError:
                    yield {"id": f"line {number}", "prev_hash": None, "hash": None}


def _say(found: chain.Verified | chain.Broken, out: TextIO) -> int:
    if isinstance(found, chain.Verified):
        print(f"OK {found.count} entries", file=out)
        return 0
    print(f"BROKEN at entry {found.entry_id}: {found.reason}", file=out)
    return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m interrupt_chat", description="interrupt_chat's tools")
    audit = parser.add_subparsers(dest="tool", required=True).add_parser("audit", help="the audit's hash chain")
    verbs = audit.add_subparsers(dest="verb", required=True)
    verify = verbs.add_parser("verify", help="check the chain: OK <n> entries, or the first entry that does not match")
    source = verify.add_mutually_exclusive_group()
    source.add_argument("--db", help=f"the database URL (default: {DB_URL_ENV}, else the app's own)")
    source.add_argument("--file", type=Path, help="an export to check offline")
    export = verbs.add_parser("export", help="write every entry, with its hashes, as JSON Lines")
    export.add_argument("--out", type=Path, required=True, help="the file to write")
    export.add_argument("--db", help=f"the database URL (default: {DB_URL_ENV}, else the app's own)")
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> int:
    """Run the command line; its exit code."""
    args = _parser().parse_args(argv)
    if args.verb == "verify" and args.file is not None:
        return _say(chain.verify(_file_lines(args.file)), out)
    url = _url(args.db)
    missing = _missing_file(url)
    if missing:
        print(f"error: no database at {missing}", file=sys.stderr)
        return 2
    try:
        db = ThreadDB(url)
        try:
            if args.verb == "verify":
                return _say(store_chain.verify(db), out)
            with db._transaction("export the audit chain") as conn, args.out.open("w", encoding="utf-8") as file:
                count = sum(1 for line in store_chain.lines(conn)
                            if file.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n"))
            print(f"wrote {count} entries to {args.out}", file=out)
            return 0
        finally:
            db.close()
    except ThreadDBError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
