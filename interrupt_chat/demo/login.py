"""The demo's login (contracts §6.2): reflex-local-auth's users, the demo's people, ``/login`` and ``whoami``.

With ``INTERRUPT_CHAT_DEMO_PEOPLE=1`` the demo has four people, ``alice``, ``bob``, ``carol`` and
``dave``, each with the password ``<id>-demo``, who sign in on ``/login`` (reflex-local-auth's
``LoginState``: its users and sessions live in Reflex's own database, ``rx.session()``). Without it
nobody signs in: :func:`signed_in` is always "" and ``whoami`` names nobody.

The database is Reflex's ``db_url`` (``REFLEX_DB_URL`` or ``rxconfig.py``); when neither is set, the
demo uses the SQLite file ``.interrupt_chat/demo_auth.db`` (never committed) and keeps the thread
database where it was (Reflex's ``db_url`` would otherwise hold the threads too). The two tables are
made with ``create_all`` at start-up (:func:`prepare_auth_db`, a lifespan task), no migrations.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import reflex as rx
import reflex.model
import sqlalchemy
from reflex.event import EventSpec
from reflex_local_auth import LocalAuthState, LocalUser, LoginState
from reflex_local_auth.auth_session import LocalAuthSession
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlmodel import Session, SQLModel, select

from ..store.engine import DEFAULT_DATA_DIR, default_db_url
from ..store.folder import make_folder
from ..store.sql import DB_URL_ENV

__all__ = ["AUTH_DB_FILE", "PEOPLE", "PEOPLE_ENV", "DemoLogin", "WhoAmI", "auth_db_url", "login_form",
           "people_mode", "prepare_auth_db", "safe_next", "seed_people", "signed_in", "whoami"]

log = logging.getLogger("interrupt_chat.demo.login")

PEOPLE_ENV = "INTERRUPT_CHAT_DEMO_PEOPLE"  # "1": the demo's people, /login and /team
REFLEX_DB_ENV = "REFLEX_DB_URL"  # Reflex's own override of rxconfig's db_url
AUTH_DB_FILE = "demo_auth.db"  # in .interrupt_chat/ (its .gitignore is "*"), beside the thread database
PEOPLE = ("alice", "bob", "carol", "dave")  # each signs in with the password "<id>-demo"
_TABLES = [LocalUser.__table__, LocalAuthSession.__table__]
_ATTEMPTS = 5  # create_all races another worker's: the loser tries again and finds the tables


def people_mode() -> bool:
    """Whether the demo has its people (``INTERRUPT_CHAT_DEMO_PEOPLE=1``)."""
    return os.environ.get(PEOPLE_ENV, "").strip() == "1"


# -- the database ----------------------------------------------------------------------------------------


def auth_db_url() -> str:
    """Reflex's database URL (``REFLEX_DB_URL``, else rxconfig's ``db_url``), else the demo's SQLite file."""
    configured = os.environ.get(REFLEX_DB_ENV, "").strip() or (rx.config.get_config().db_url or "").strip()
    return configured or f"sqlite:///{Path.cwd() / DEFAULT_DATA_DIR / AUTH_DB_FILE}"


def _use(url: str) -> Engine:
    """Make ``url`` Reflex's database (``rx.session()``) and return its engine.

    When the app configured none, the thread database is pinned where it was first (it follows
    Reflex's ``db_url`` unless ``INTERRUPT_CHAT_DB_URL`` says otherwise). The engine is the one Reflex
    would make, with a busy timeout for SQLite (two workers sign people in at once), registered before
    Reflex makes its own: that one warns "run reflex db init", which the demo does not need.
    """
    config = rx.config.get_config()
    if not (os.environ.get(REFLEX_DB_ENV, "").strip() or config.db_url):
        os.environ.setdefault(DB_URL_ENV, default_db_url(None))
    os.environ[REFLEX_DB_ENV] = url  # a reloaded config and a worker started from here read it too
    config.db_url = url
    args = reflex.model.get_engine_args(url)
    if make_url(url).get_backend_name() == "sqlite":
        if make_url(url).database not in (None, "", ":memory:"):
            make_folder(str(make_url(url).database))
        args["connect_args"] = {**args.get("connect_args", {}), "timeout": 30}
    engines = getattr(reflex.model, "_ENGINE", None)
    if isinstance(engines, dict) and url not in engines:
        engines[url] = sqlalchemy.create_engine(url, **args)
    return reflex.model.get_engine(url)


def _create_tables(engine: Engine) -> None:
    """reflex-local-auth's two tables, if missing; another worker making them at the same moment is fine."""
    for attempt in range(_ATTEMPTS):
        try:
            SQLModel.metadata.create_all(engine, tables=_TABLES)
            return
        except DBAPIError:  # "already exists" (the other worker won the race) or "database is locked"
            if attempt == _ATTEMPTS - 1:
                raise
            time.sleep(0.2 * (attempt + 1))


def seed_people(engine: Engine) -> int:
    """Add the demo's people that are missing, enabled, with the password ``<id>-demo``.

    Idempotent: a person already there is left as is, and one another worker adds at the same moment
    (the username is unique) is taken as added.

    Args:
        engine: the database's engine (its tables made).

    Returns:
        How many people this call added.
    """
    added = 0
    for person in PEOPLE:
        with Session(engine) as session:
            if session.exec(select(LocalUser).where(LocalUser.username == person)).first() is not None:
                continue
            session.add(LocalUser(username=person, password_hash=LocalUser.hash_password(f"{person}-demo"),
                                  enabled=True))
            try:
                session.commit()
                added += 1
            except IntegrityError:  # another worker added them first
                session.rollback()
    return added


def prepare_auth_db() -> None:
    """Lifespan task: use the demo's auth database, make its tables and, in people mode, add its people."""
    url = auth_db_url()
    engine = _use(url)
    _create_tables(engine)
    if people_mode():
        added = seed_people(engine)
        if added:
            log.info("demo login: %d of the demo's people added (%s)", added, ", ".join(PEOPLE))


# -- who the tab is ------------------------------------------------------------------------------------


async def signed_in(state: rx.State) -> str:
    """The username signed in on ``state``'s tab; "" when nobody is, or when the demo has no people.

    Args:
        state: any state of the tab (a chat's, inside its lock).
    """
    if not people_mode():
        return ""
    auth = await state.get_state(LocalAuthState)
    return str(auth.authenticated_user.username or "") if auth.is_authenticated else ""


def safe_next(target: str) -> str:
    """``target`` when it is a path of this site (``/team``, ``/inbox?x=1``), else ``/``."""
    parts = urlsplit(target)
    if (not target.startswith("/") or target.startswith("//") or "\\" in target or parts.scheme or parts.netloc
            or any(ord(c) < 32 for c in target)):
        return "/"
    return target


def _load(path: str) -> EventSpec:
    """A full page load of ``path`` (the chat reads again who the tab is)."""
    return rx.call_script(f"window.location.assign({json.dumps(path)})")


class DemoLogin(LoginState):
    """``/login``: reflex-local-auth's sign-in, then a full load of ``?next=`` (a path of this site) or ``/``."""

    @rx.event
    def sign_in(self, form_data: dict[str, Any]) -> Any:
        """Check the form with reflex-local-auth's ``LoginState.on_submit``; on success load the next page.

        Args:
            form_data: ``username`` and ``password``.
        """
        refused = LoginState.on_submit.fn(self, form_data)
        if self.error_message:
            return refused
        return _load(safe_next(self.router.url.query_parameters.get("next", "")))


class WhoAmI(LocalAuthState):
    """The signed-in person of the tab, for ``whoami``, and the logout."""

    @rx.var(initial_value="")
    def person(self) -> str:
        """The signed-in username, or ""."""
        return str(self.authenticated_user.username or "") if self.is_authenticated else ""

    @rx.event
    def logout(self) -> Any:
        """reflex-local-auth's ``do_logout``, then the page again, anonymous."""
        self.do_logout()
        return rx.call_script("window.location.reload()")


# -- components ------------------------------------------------------------------------------------------


def whoami() -> rx.Component:
    """``whoami`` (``data-person``: the signed-in username, "" when anonymous) with ``logout``, or "Sign in"."""
    if not people_mode():
        return rx.el.span(custom_attrs={"data-testid": "whoami", "data-person": ""})
    return rx.hstack(
        rx.cond(
            WhoAmI.person != "",
            rx.fragment(
                rx.text(WhoAmI.person, size="2", weight="medium"),
                rx.button("Sign out", size="1", variant="soft", on_click=WhoAmI.logout,
                          custom_attrs={"data-testid": "logout"}),
            ),
            rx.link("Sign in", href="/login", size="2", weight="medium", class_name="ic-nav-link"),
        ),
        align="center", spacing="2", class_name="ic-whoami",
        custom_attrs={"data-testid": "whoami", "data-person": WhoAmI.person},
    )


def login_form() -> rx.Component:
    """The sign-in form of ``/login``: ``login-user``, ``login-password``, ``login-submit``, ``login-error``."""
    return rx.form(
        rx.vstack(
            rx.cond(DemoLogin.error_message != "",
                    rx.callout(DemoLogin.error_message, icon="triangle_alert", color_scheme="red", role="alert",
                               custom_attrs={"data-testid": "login-error"})),
            rx.el.label("User", html_for="username"),
            rx.input(name="username", id="username", auto_complete="username", required=True, width="100%",
                     custom_attrs={"data-testid": "login-user"}),
            rx.el.label("Password", html_for="password"),
            rx.input(name="password", id="password", type="password", auto_complete="current-password",
                     width="100%", custom_attrs={"data-testid": "login-password"}),
            rx.button("Sign in", type="submit", custom_attrs={"data-testid": "login-submit"}),
            spacing="2", max_width="320px",
        ),
        on_submit=DemoLogin.sign_in,
        reset_on_submit=False,
    )
