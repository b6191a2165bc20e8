"""Browser tests: real Chromium (Debian's) driving the real Reflex app (AppHarness).

The app talks to a scripted demo agent served on its own loopback port through
``INTERRUPT_CHAT_AGENT_URL`` — the way an outside acceptance suite drives the site — so tests can
read what the agent received from its store. ``RX_HARNESS=prod`` runs the static-export harness.

``scripts/test.sh`` runs this folder in two stages, and a test runs in a stage when that stage can tell
it something the other cannot (``pytest.mark.stage``, ``tests/stages.py``; unmarked tests run in both):

- **both:** every page and card drawn (``test_pages``, ``test_scenarios``), masked secrets, the loading
  states, the thread list, live sync between tabs, signing in and the chat basics;
- **dev only** (``stage("dev")``): the dev server checks every render with React's development build,
  whose warnings fail a test (``tests/browser_errors.py``), so the widget-heavy tests run here: the rule
  editor, rules, insights' charts, the keyboard, attachments, frontend tools, branches, notifications;
  and the producers;
- **prod only** (``stage("prod")``): the production build on PostgreSQL is what a deployment runs, so the
  database-as-arbiter tests run here: people, bulk, decision links, expiry, restarts, consistency, long
  threads, the streamed bytes; hostile agents and forged events, the identity cookie; the dojo pages
  against the demo agent (the dev stage draws them in ``tests/dojo``, against the dojo's servers); and
  what reads only the drawn page (axe-core, small screens).

Each module runs at least once. The store's SQL runs on SQLite and PostgreSQL in the unit tests (``db_url``).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from interrupt_chat.demo.agent import create_app as create_demo_agent
from tests.browser_errors import browser_errors  # noqa: F401 - an autouse fixture
from tests.dojo.matrix import Recorder
from tests.postgres import running_postgres
from tests.stages import STAGE, skip_reason
from tests.unit.agents import serve_in_thread

APP_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = APP_ROOT / "test-artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")
EXPIRES_IN = 6.0  # the demo agent's "expiring" scenario, shortened for the tests

expect.set_options(timeout=20_000)


def pytest_configure(config: pytest.Config) -> None:
    """The ``dojo``-marked tests here drive the demo agent: its column of the dojo matrix."""
    config.pluginmanager.register(Recorder("demo"), "dojo-matrix")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test marked for the other stage is skipped, and says where it runs (the module's docstring explains
    the split)."""
    for item in items:
        if reason := skip_reason(item):
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    launch = {**browser_type_launch_args, "args": CHROMIUM_ARGS}
    if CHROMIUM:
        launch["executable_path"] = CHROMIUM
    return launch


@dataclass
class DemoAgent:
    app: Any
    url: str

    @property
    def store(self):
        return self.app.state.store

    def records(self, thread_id: str | None = None) -> list[dict[str, Any]]:
        return self.store.records(thread_id)

    def last_thread(self) -> str:
        records = self.records()
        assert records, "the agent received nothing"
        return records[-1]["threadId"]


class LogCapture(logging.Handler):
    """Every log record of the test process (the backend runs in it), for S23 checks."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(record.getMessage())
        except Exception:  # noqa: BLE001 - a broken record must not break the app
            self.lines.append(str(record.msg))


@pytest.fixture(scope="session")
def demo_agent() -> Iterator[DemoAgent]:
    # 3 ms a delta: the 2,000-delta "long" answer streams for about 6 s, time enough to act mid-answer
    app = create_demo_agent(delay=0.003, expires_in=EXPIRES_IN)
    with serve_in_thread(app) as base_url:
        yield DemoAgent(app, base_url + "/")


@pytest.fixture(scope="session")
def log_capture() -> Iterator[LogCapture]:
    handler = LogCapture()
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield handler
    root.removeHandler(handler)
    root.setLevel(previous)


POLICY_FILE = """\
- tool: pay_invoice
  when: {payee: {equals: Smallco}, amount: {at-most: 100}}
  effect: allow
- tool: pay_invoice
  when: {payee: {equals: Blockco}}
  effect: deny
- tool: pay_invoice
  when: {payee: {equals: Riskco}}
  effect: ask
  risk: {level: high, why: Riskco is a new payee - check the bank details}
- tool: pay_invoice
  when: {payee: {one-of: [Shadowco]}}
  effect: deny
  mode: shadow
"""  # the demo's rules as code in the browser tests (tests/e2e/test_rules_fit.py)


@pytest.fixture(scope="session")
def thread_db_url(tmp_path_factory) -> Iterator[str]:
    """The app's thread database for this test session: a fresh SQLite file against the dev server, a
    real PostgreSQL server (started here) against the production build, so the tests that run in both
    stages cover both databases."""
    if STAGE == "prod":
        with running_postgres() as url:
            yield url
    else:
        yield f"sqlite:///{tmp_path_factory.mktemp('threads') / 'threads.db'}"


@pytest.fixture(scope="session")
def dojo_base() -> str | None:
    """The dojo server the dojo pages talk to (``INTERRUPT_CHAT_DOJO_URL``): none here, the demo agent."""
    return None


@pytest.fixture(scope="session")
def reflex_app(demo_agent: DemoAgent, log_capture: LogCapture, thread_db_url: str, dojo_base: str | None,
               tmp_path_factory):
    from reflex.testing import AppHarness, AppHarnessProd

    os.environ["INTERRUPT_CHAT_AGENT_URL"] = demo_agent.url
    if dojo_base:  # read when the app module is imported (the pages' chats)
        os.environ["INTERRUPT_CHAT_DOJO_URL"] = dojo_base
    else:
        os.environ.pop("INTERRUPT_CHAT_DOJO_URL", None)
    os.environ["INTERRUPT_CHAT_DB_URL"] = thread_db_url
    # The demo's people (contracts §6.2: /login, /team, whoami names the signed-in person) for the whole
    # session, their logins in a fresh file: every other page is as without them for an anonymous visitor.
    os.environ["INTERRUPT_CHAT_DEMO_PEOPLE"] = "1"
    os.environ["REFLEX_DB_URL"] = f"sqlite:///{tmp_path_factory.mktemp('auth') / 'auth.db'}"
    # Rules as code (contracts §6.4) for the whole session: they speak only for payees no other test pays
    policy_file = tmp_path_factory.mktemp("policy") / "rules.yaml"
    policy_file.write_text(POLICY_FILE)
    os.environ["INTERRUPT_CHAT_POLICY_FILE"] = str(policy_file)
    harness_cls = AppHarnessProd if STAGE == "prod" else _same_site(AppHarness)
    with harness_cls.create(root=APP_ROOT, app_name="interrupt_chat") as harness:
        yield harness


class _NamedSocket:
    """A listening socket whose name says ``localhost`` (what the harness writes into ``api_url``)."""

    def __init__(self, sock: Any) -> None:
        self._sock = sock

    def getsockname(self) -> tuple[str, int]:
        return "localhost", self._sock.getsockname()[1]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def _same_site(harness_cls: Any) -> Any:
    """The dev harness serves the page on ``localhost`` and names the backend ``127.0.0.1``: two sites, so
    the browser would neither keep nor send the backend's SameSite identity cookie. ``reflex run``
    names both ``localhost``; so does this harness."""

    class SameSite(harness_cls):
        def _poll_for_servers(self, timeout: Any = None) -> Any:
            return _NamedSocket(super()._poll_for_servers(timeout))

    return SameSite


@pytest.fixture
def agent_url(demo_agent: DemoAgent):
    """Point new chat sessions at another agent for one test (sessions read the URL when created)."""
    def use(url: str) -> None:
        os.environ["INTERRUPT_CHAT_AGENT_URL"] = url
    yield use
    os.environ["INTERRUPT_CHAT_AGENT_URL"] = demo_agent.url


@pytest.fixture
def app_url(reflex_app) -> str:
    return reflex_app.frontend_url.rstrip("/")


class Chat:
    """The demo site's chat, driven only through the DOM contract (docs/dom-contract.md)."""

    def __init__(self, page: Page, base_url: str) -> None:
        self.page = page
        self.base_url = base_url

    def open(self, path: str = "/") -> Chat:
        self.page.goto(self.base_url + path)
        expect(self.page.get_by_test_id("chat-input")).to_be_visible(timeout=120_000)
        expect(self.status).to_have_attribute("data-status", "idle")
        return self

    def open_pending(self, path: str = "/") -> Chat:
        """Open ``path`` where the owner's newest thread waits for an answer."""
        self.page.set_viewport_size({"width": 1280, "height": 900})
        self.page.goto(self.base_url + path)
        expect(self.page.get_by_test_id("chat-input")).to_be_visible(timeout=120_000)
        self.wait("interrupted")
        return self

    @property
    def status(self):
        return self.page.get_by_test_id("run-status")

    @property
    def input(self):
        return self.page.get_by_test_id("chat-input")

    def send(self, text: str) -> None:
        """Type and press Enter; returns once the message is in the transcript (the run started)."""
        expect(self.input).to_be_enabled()
        sent = self.messages("user").count()
        self.input.fill(text)
        self.input.press("Enter")
        expect(self.messages("user")).to_have_count(sent + 1)

    def interrupt(self, text: str, path: str = "/") -> None:
        """Open ``path``, send ``text`` and wait until the agent asks for something."""
        self.open(path)
        self.send(text)
        self.wait("interrupted")

    def wait(self, status: str, timeout: float = 20_000) -> None:
        expect(self.status).to_have_attribute("data-status", status, timeout=timeout)

    def cards(self):
        return self.page.get_by_test_id("interrupt-card")

    def card(self, index: int = 0):
        return self.cards().nth(index)

    def messages(self, role: str):
        return self.page.locator(f'[data-testid="message"][data-role="{role}"]')

    def last_assistant_text(self) -> str:
        return self.messages("assistant").last.inner_text()

    def shot(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{re.sub(r'[^a-z0-9_-]+', '-', name.lower())}.png"), full_page=True)

    def shot_content(self, name: str) -> None:
        """The page's content only (title, intro, chat: ``.ic-main``), for the README's screenshots."""
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.locator(".ic-main").screenshot(path=str(ARTIFACTS / f"{name}.png"),
                                                 style=".ic-nav { display: none !important; }")  # sticky: once only


@pytest.fixture
def chat(page: Page, app_url: str) -> Chat:
    page.set_viewport_size({"width": 1280, "height": 900})
    return Chat(page, app_url)
