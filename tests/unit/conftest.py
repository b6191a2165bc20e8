"""Shared fixtures for the protocol-core tests.

``loopback``: one uvicorn server on 127.0.0.1 (ephemeral port) for the whole session, started in
a thread. Tests mount their own ASGI app on a fresh path with ``loopback.mount(app)`` and get the
full URL back; the app then runs in the server's thread and event loop (use ``threading.Event``
to observe it from the test).

``postgres_url``: a real PostgreSQL server for the whole session (Debian's ``postgresql`` package,
``/usr/lib/postgresql/*/bin``; ``scripts/setup.sh`` installs it), initialised in a temporary folder
and listening on 127.0.0.1 at a free port; its URL (``postgresql+psycopg://app@127.0.0.1:PORT/postgres``,
trust authentication) is the value. Started on first use only; stopped at the end. Missing binaries
fail the tests that use it (they are not skipped).
"""

from __future__ import annotations

import itertools
import uuid
from typing import Any

import pytest

from tests.postgres import running_postgres
from tests.unit.agents import serve_in_thread


class Loopback:
    def __init__(self) -> None:
        self.base_url = ""
        self._apps: dict[str, Any] = {}
        self._ids = itertools.count(1)

    def mount(self, app: Any) -> str:
        path = f"/agent-{next(self._ids)}"
        self._apps[path] = app
        return self.base_url + path

    async def __call__(self, scope, receive, send) -> None:
        app = self._apps.get(scope.get("path", ""))
        if app is None:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b"no such test agent"})
            return
        await app(scope, receive, send)


@pytest.fixture(scope="session")
def loopback():
    router = Loopback()
    with serve_in_thread(router) as base_url:
        router.base_url = base_url
        yield router


@pytest.fixture(scope="session")
def postgres_url():
    with running_postgres() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:
    """A new thread database's URL: a SQLite file, then a database of its own on the session's PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'threads.db'}"
    import psycopg

    server = request.getfixturevalue("postgres_url")
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(scope="session", autouse=True)
def _demo_login_database(tmp_path_factory):
    """Reflex's database with the demo login's tables, as the app's start-up makes them: once the demo site
    is imported, reflex-local-auth's state reads it whenever a tab's whole state is drawn (``root.dict()``)."""
    from interrupt_chat.demo.login import prepare_auth_db

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFLEX_DB_URL", f"sqlite:///{tmp_path_factory.mktemp('auth') / 'auth.db'}")
        patch.delenv("INTERRUPT_CHAT_DEMO_PEOPLE", raising=False)
        prepare_auth_db()
        yield


@pytest.fixture(autouse=True)
def _thread_database_off_unless_asked(monkeypatch):
    """Chats keep their threads in memory in the unit tests (no file in the checkout); a test that
    wants the database sets ``INTERRUPT_CHAT_DB_URL`` itself."""
    monkeypatch.setenv("INTERRUPT_CHAT_DB_URL", "off")


@pytest.fixture(autouse=True)
def _database_up_at_start(monkeypatch):
    """Each test starts with the thread database's availability unknown (up), as a new process does.

    The availability is the process's (:class:`interrupt_chat.store.outage.Outage`): a test that
    meets a database that is down leaves a pause of up to a minute behind it, and every later test
    in the same pytest worker would then keep its threads in memory only (seen once in CI, in the
    random tabs-and-workers test that followed an unreachable-database test).
    """
    from interrupt_chat.store.outage import Outage
    from interrupt_chat.tab import persistence

    monkeypatch.setattr(persistence, "_outage", Outage())


@pytest.fixture
def sweeps_by_hand(monkeypatch) -> None:
    """The test runs the sweeper's passes itself (``expiry.sweep()``, ``sweep.remind()``) and counts what they did.

    The worker's sweeper, which the first chat event starts and which passes every second, would
    otherwise take a step between the test's own on a slow machine (seen in a fresh clone: a
    reminder pass counted 1 step instead of 2).
    """
    from interrupt_chat.approvals import expiry

    monkeypatch.setattr(expiry, "ensure_running", lambda: None)


@pytest.fixture(autouse=True)
def _no_live_sync_app(monkeypatch):
    """Unit tests have no running Reflex app: live sync reaches no tab unless a test says how (test_sync.py)."""
    import contextlib

    from interrupt_chat.workers import sync

    @contextlib.asynccontextmanager
    async def nowhere(token: str, state_name: str):
        yield None

    monkeypatch.setattr(sync, "modify", nowhere)


@pytest.fixture(autouse=True)
def _a_browser_per_state_tree(monkeypatch):
    """Unit tests drive states without sockets: a state tree whose session id no socket bound
    (``identity.bind``) is a browser of its own, with a person made for it (what a handshake gives)."""
    import weakref

    from interrupt_chat.agui import new_id
    from interrupt_chat.tab import identity

    real = identity.person_of
    people: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def person_of(state):
        found = real(state)
        if found is not None:
            return found
        root = state._get_root_state()
        root = getattr(root, "__wrapped__", root)
        if root not in people:
            people[root] = new_id("person")
        return people[root]

    monkeypatch.setattr(identity, "person_of", person_of)
    yield
    identity._by_sid.clear()
    identity._legacy_by_sid.clear()

