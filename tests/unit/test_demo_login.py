"""The demo's login (contracts §6.2): its database, its people, who a tab is, where a sign-in leads."""

from __future__ import annotations

import datetime
import os
import threading
from pathlib import Path

import pytest
import reflex as rx
import reflex.model
from reflex_local_auth import LocalAuthState, LocalUser
from reflex_local_auth.auth_session import LocalAuthSession
from sqlmodel import Session, select

from interrupt_chat.demo import login
from interrupt_chat.demo.login import PEOPLE, prepare_auth_db, safe_next, seed_people, signed_in


@pytest.fixture
def auth_db(monkeypatch, tmp_path) -> str:
    """The demo's auth database in a fresh SQLite file, people mode on; Reflex's config and env restored after."""
    url = f"sqlite:///{tmp_path / 'auth.db'}"
    monkeypatch.setenv("REFLEX_DB_URL", url)
    monkeypatch.setenv(login.PEOPLE_ENV, "1")
    monkeypatch.setattr(rx.config.get_config(), "db_url", rx.config.get_config().db_url)
    yield url
    engine = reflex.model._ENGINE.pop(url, None)
    if engine is not None:
        engine.dispose()


def users(url: str) -> dict[str, LocalUser]:
    with Session(reflex.model.get_engine(url)) as session:
        return {user.username: user for user in session.exec(select(LocalUser)).all()}


def test_prepare_makes_the_tables_and_the_people_once(auth_db):
    prepare_auth_db()
    first = users(auth_db)
    prepare_auth_db()  # a restart
    assert seed_people(reflex.model.get_engine(auth_db)) == 0
    again = users(auth_db)
    assert sorted(again) == sorted(PEOPLE)
    assert {name: user.id for name, user in again.items()} == {name: user.id for name, user in first.items()}
    for name, user in again.items():
        assert user.enabled and user.verify(f"{name}-demo") and not user.verify("wrong")
        assert user.password_hash != f"{name}-demo".encode()  # reflex-local-auth's bcrypt hash


def test_two_workers_starting_at_once_add_each_person_once(auth_db):
    errors: list[BaseException] = []

    def start() -> None:
        try:
            prepare_auth_db()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    workers = [threading.Thread(target=start) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert sorted(users(auth_db)) == sorted(PEOPLE)


def test_without_people_mode_the_tables_are_made_and_nobody_is_added(auth_db, monkeypatch):
    monkeypatch.setenv(login.PEOPLE_ENV, "0")
    prepare_auth_db()
    assert users(auth_db) == {}


def test_the_default_database_is_a_file_beside_the_threads_and_the_threads_stay(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REFLEX_DB_URL", "set")  # restored after the test: the demo sets it
    monkeypatch.delenv("REFLEX_DB_URL")
    monkeypatch.setenv("INTERRUPT_CHAT_DB_URL", "set")
    monkeypatch.delenv("INTERRUPT_CHAT_DB_URL")
    monkeypatch.setenv(login.PEOPLE_ENV, "")
    monkeypatch.setattr(rx.config.get_config(), "db_url", None)
    prepare_auth_db()
    url = f"sqlite:///{tmp_path / '.interrupt_chat' / 'demo_auth.db'}"
    try:
        assert rx.config.get_config().db_url == url
        assert Path(tmp_path / ".interrupt_chat" / "demo_auth.db").exists()
        assert (tmp_path / ".interrupt_chat" / ".gitignore").read_text().strip().endswith("*")
        assert os.environ["INTERRUPT_CHAT_DB_URL"] == f"sqlite:///{tmp_path / '.interrupt_chat' / 'threads.db'}"
    finally:
        reflex.model._ENGINE.pop(url).dispose()


def _auth(token: str = "") -> LocalAuthState:
    root = rx.State()
    auth = root.get_substate(LocalAuthState.get_full_name().split("."))
    auth.auth_token = token
    return auth


async def test_signed_in_is_empty_for_an_anonymous_tab(auth_db):
    prepare_auth_db()
    assert await signed_in(_auth()) == ""
    assert await signed_in(_auth("no-such-session")) == ""


async def test_signed_in_names_the_person_of_the_tabs_session(auth_db, monkeypatch):
    prepare_auth_db()
    with Session(reflex.model.get_engine(auth_db)) as session:
        bob = session.exec(select(LocalUser).where(LocalUser.username == "bob")).one()
        expiry = datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=1)
        session.add(LocalAuthSession(user_id=bob.id, session_id="tab-token", expiration=expiry))
        session.commit()
    assert await signed_in(_auth("tab-token")) == "bob"
    monkeypatch.setenv(login.PEOPLE_ENV, "")  # without the demo's people nobody is signed in
    assert await signed_in(_auth("tab-token")) == ""


@pytest.mark.parametrize(
    ("target", "expected"),
    [("/team", "/team"), ("/inbox?scope=mine", "/inbox?scope=mine"), ("", "/"), ("//evil.test/x", "/"),
     ("https://evil.test/", "/"), ("/\\evil.test", "/"), ("javascript:alert(1)", "/"), ("/a\nb", "/"),
     ("team", "/")],
)
def test_a_sign_in_leads_only_to_a_path_of_this_site(target, expected):
    assert safe_next(target) == expected
