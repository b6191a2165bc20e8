"""``examples/embedded_app`` as a new user runs it (issue 22).

The wheel is built from this checkout and installed into a fresh venv with the app's own
requirements; the app runs with ``reflex run`` in dev mode from a copy of its folder (its own
``rxconfig.py``, the default SQLite location, Reflex's file watcher on) against the pydantic-ai
example agent. The browser approves a tool call in the chat, reloads with one pending, answers it
from the inbox (drawn by the app's own slot), and sends 20 messages while the backend's process
stays the same (no reload loop). Issue 39: a set of two requests answered through the README's slot
in the chat, an inbox row per waiting thread bound to its own request, and the inbox counting,
selecting and filtering the slot's rows.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest
from playwright.sync_api import Page, expect

from tests.producers import producer_server
from tests.unit.agents import free_port

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "embedded_app"
LOGS = ROOT / "test-artifacts"
START_TIMEOUT = 420.0  # a fresh .web: bun installs the frontend's packages

expect.set_options(timeout=30_000)


@dataclass
class RunningApp:
    url: str
    folder: Path
    backend_port: int


def _run(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} failed ({done.returncode}):\n{done.stdout[-3000:]}"
                           f"\n{done.stderr[-3000:]}")


def _clean_env() -> dict[str, str]:
    """The user's shell: no test venv, no thread database URL (the app uses the default location)."""
    drop = ("VIRTUAL_ENV", "PYTHONPATH", "INTERRUPT_CHAT_", "PYTEST_", "REFLEX_ENV_MODE")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh venv holding the wheel built from this checkout and the app's requirements."""
    work = tmp_path_factory.mktemp("embedded")
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", work / "dist", ROOT)
    [wheel] = (work / "dist").glob("interrupt_chat-*.whl")
    _run(sys.executable, "-m", "venv", work / "venv")
    python = work / "venv" / "bin" / "python"
    _run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel, "-r",
         EXAMPLE / "requirements.txt", env=_clean_env())
    return work / "venv"


@pytest.fixture(scope="module")
def running_app(venv: Path, tmp_path_factory) -> Iterator[RunningApp]:
    folder = tmp_path_factory.mktemp("app") / "embedded_app"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns(".web", ".states", ".interrupt_chat",
                                                                    "__pycache__"))
    frontend, backend = free_port(), free_port()
    LOGS.mkdir(exist_ok=True)
    with producer_server("pydantic_ai") as agent, (LOGS / "embedded-app.log").open("wb") as log:
        env = {**_clean_env(), "SUPPORT_AGENT_URL": agent + "/", "REFLEX_TELEMETRY_ENABLED": "false",
               "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
        process = subprocess.Popen([str(venv / "bin" / "reflex"), "run", "--env", "dev", "--frontend-port",
                                    str(frontend), "--backend-port", str(backend), "--backend-host", "127.0.0.1"],
                                   cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            url = f"http://localhost:{frontend}"
            _wait_for(process, url, f"http://localhost:{backend}/ping")
            yield RunningApp(url, folder, backend)
        finally:
            _stop(process)


def _wait_for(process: subprocess.Popen, *urls: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    for url in urls:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"reflex run exited ({process.returncode}); see test-artifacts/embedded-app.log")
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not answer in {START_TIMEOUT:.0f} s; see "
                                   "test-artifacts/embedded-app.log")
            time.sleep(0.5)


def _stop(process: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(15)
            return
        except subprocess.TimeoutExpired:
            continue


def _backend_pids(port: int) -> set[int]:
    """The processes that hold the backend's listening socket (a reload replaces the worker)."""
    return {c.pid for c in psutil.net_connections("tcp")
            if c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN and c.pid}


def _send(page: Page, text: str) -> None:
    box = page.get_by_test_id("chat-input")
    expect(box).to_be_enabled()
    box.fill(text)
    page.get_by_test_id("chat-send").click()


def test_approve_in_the_chat(page: Page, running_app: RunningApp):
    page.goto(running_app.url + "/")
    _send(page, "delete the temp files")
    expect(page.get_by_test_id("app-question")).to_have_text(re.compile(r"\S"))  # the agent's own question
    page.get_by_test_id("app-yes").click()
    expect(page.get_by_test_id("message").filter(has_text="Tool said")).to_have_count(1)
    expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", "idle")


def test_a_pending_approval_survives_a_reload_and_is_answered_from_the_inbox(page: Page, running_app: RunningApp):
    page.goto(running_app.url + "/")
    expect(page.get_by_test_id("thread-item")).not_to_have_count(0)
    page.get_by_test_id("thread-new").click()
    _send(page, "clean up again")
    expect(page.get_by_test_id("app-question")).to_be_visible()
    page.reload()
    expect(page.get_by_test_id("app-question")).to_be_visible()
    expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", "interrupted")
    page.goto(running_app.url + "/inbox")
    item = page.get_by_test_id("inbox-item")
    expect(item).to_have_count(1)
    expect(item).to_have_attribute("data-slot", "custom")  # the app's own slot, not the default card
    item.get_by_test_id("app-yes").click()
    expect(page.get_by_test_id("inbox-empty")).to_be_visible()
    page.goto(running_app.url + "/")
    expect(page.get_by_test_id("message").filter(has_text="Tool said")).to_have_count(1)
    expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", "idle")


def test_dev_mode_does_not_reload_on_thread_writes(page: Page, running_app: RunningApp):
    page.goto(running_app.url + "/")
    page.get_by_test_id("thread-new").click()
    before = _backend_pids(running_app.backend_port)
    assert before, "no process listens on the backend port"
    for n in range(20):
        _send(page, f"hello {n}")
        expect(page.get_by_test_id("message").and_(page.locator('[data-role="assistant"]'))).to_have_count(n + 1)
    assert (running_app.folder / ".interrupt_chat" / "threads.db").exists()  # the default location was written
    time.sleep(2)  # a reload the last writes set off would have started by now
    assert _backend_pids(running_app.backend_port) == before


# -- issue 39: the documented slot on a set of two, the inbox's rows bound and counted (pydantic-ai's "multi") --


def _question(page: Page, tool: str) -> None:
    expect(page.get_by_test_id("app-question").first).to_contain_text(tool)


def test_a_set_of_two_is_answered_through_the_simple_slot(page: Page, running_app: RunningApp):
    page.goto(running_app.url + "/")
    page.get_by_test_id("thread-new").click()
    _send(page, "multi delete the files and send the report")
    slot = page.get_by_test_id("interrupt-slot")
    expect(slot.get_by_test_id("app-question")).to_contain_text("delete_files")
    expect(slot.get_by_test_id("app-waiting")).to_have_text("2 waiting")
    slot.get_by_test_id("app-yes").click()
    expect(slot.get_by_test_id("app-question")).to_contain_text("send_report")  # the card moved on
    expect(slot.get_by_test_id("app-waiting")).to_have_text("1 waiting")
    expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", "interrupted")
    slot.get_by_test_id("app-yes").click()
    said = page.get_by_test_id("message").filter(has_text="Tool said")
    expect(said).to_have_count(1)
    expect(said).to_contain_text("deleted 3 files")
    expect(said).to_contain_text("report sent")
    expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", "idle")
    expect(page.get_by_test_id("chat-input")).to_be_enabled()  # the composer unlocked


def _two_waiting_threads(page: Page, running_app: RunningApp) -> None:
    """A thread waiting on delete_files and send_report, and one waiting on delete_files alone."""
    page.goto(running_app.url + "/")
    page.get_by_test_id("thread-new").click()
    _send(page, "multi both")
    expect(page.get_by_test_id("app-waiting")).to_have_text("2 waiting")
    page.get_by_test_id("thread-new").click()
    _send(page, "clean up")
    expect(page.get_by_test_id("app-waiting")).to_have_text("1 waiting")


def test_each_inbox_row_is_bound_to_its_own_request(page: Page, running_app: RunningApp):
    _two_waiting_threads(page, running_app)
    page.get_by_role("link", name="Inbox").click()  # the app's own link (the page's socket stays)
    items = page.get_by_test_id("inbox-item")
    expect(items).to_have_count(2)
    expect(items.and_(page.locator('[data-slot="custom"]'))).to_have_count(2)
    expect(items.filter(has=page.get_by_test_id("app-waiting").filter(has_text="2 waiting"))).to_have_count(1)
    rows = {item.get_by_test_id("app-waiting").inner_text(): item.get_attribute("data-thread-id")
            for item in items.all()}
    multi = page.locator(f'[data-testid="inbox-item"][data-thread-id="{rows["2 waiting"]}"]')
    single = page.locator(f'[data-testid="inbox-item"][data-thread-id="{rows["1 waiting"]}"]')
    multi.get_by_test_id("app-yes").click()  # the multi thread's first request only
    expect(multi.get_by_test_id("app-question")).to_contain_text("send_report")  # that row moved on
    expect(multi.get_by_test_id("app-waiting")).to_have_text("1 waiting")
    expect(single.get_by_test_id("app-question")).to_contain_text("delete_files")  # the other did not
    single.get_by_test_id("app-no").click()
    expect(items).to_have_count(1)
    multi.get_by_test_id("app-yes").click()
    expect(page.get_by_test_id("inbox-empty")).to_be_visible()


def test_the_inbox_counts_selects_and_filters_custom_slot_rows(page: Page, running_app: RunningApp):
    _two_waiting_threads(page, running_app)
    page.get_by_role("link", name="Inbox").click()  # the app's own link (the page's socket stays)
    expect(page.get_by_test_id("inbox-item")).to_have_count(2)
    expect(page.get_by_test_id("inbox-empty")).to_have_count(0)  # something waits: it is not said otherwise
    selects = page.get_by_test_id("inbox-select")
    expect(selects).to_have_count(3)  # one per request: two in the multi thread, one in the other
    select_all = page.get_by_test_id("inbox-select-all")
    expect(select_all).to_be_enabled()
    select_all.click()
    for n in range(3):
        expect(selects.nth(n)).to_have_attribute("aria-checked", "true")
    select_all.click()
    expect(page.get_by_test_id("inbox-approve-selected")).to_be_disabled()
    reason = page.get_by_test_id("inbox-filter-reason")
    expect(reason.locator("option")).to_have_text(["any", "tool_call"])
    tool = page.get_by_test_id("inbox-filter-tool")
    expect(tool.locator("option")).to_have_text(["any", "delete_files", "send_report"])
    tool.select_option("send_report")
    expect(page.get_by_test_id("inbox-item")).to_have_count(1)  # only the thread that asks to send the report
    expect(page.get_by_test_id("app-waiting")).to_have_text("2 waiting")
    tool.select_option("any")
    expect(page.get_by_test_id("inbox-item")).to_have_count(2)


# -- issue 39: "Always allow" and bulk on pydantic-ai's approvals (an optional ``reason``: still a plain approval) --


def test_always_allow_through_the_slot_makes_a_rule_that_answers_the_next_request(page: Page,
                                                                                running_app: RunningApp):
    page.goto(running_app.url + "/")
    page.get_by_test_id("thread-new").click()
    _send(page, "clean up")
    _question(page, "delete_files")
    page.get_by_test_id("app-always").click()  # rule made, and this request approved
    expect(page.get_by_test_id("message").filter(has_text="Tool said")).to_have_count(1)
    expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", "idle")
    page.get_by_test_id("thread-new").click()
    _send(page, "clean up again")
    expect(page.get_by_test_id("message").filter(has_text="Tool said")).to_have_count(1)  # the rule answered
    expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", "idle")
    expect(page.get_by_test_id("app-question")).to_have_count(0)  # no card was drawn for it


def test_bulk_approve_answers_every_selected_pydantic_ai_request(page: Page, running_app: RunningApp):
    _two_waiting_threads(page, running_app)
    page.get_by_role("link", name="Inbox").click()  # the app's own link (the page's socket stays)
    expect(page.get_by_test_id("inbox-select")).to_have_count(3)
    page.get_by_test_id("inbox-select-all").click()
    page.get_by_test_id("inbox-approve-selected").click()
    confirm = page.get_by_test_id("inbox-bulk-confirm")
    expect(confirm).to_contain_text("3")
    confirm.get_by_test_id("inbox-bulk-confirm-yes").click()
    result = page.get_by_test_id("inbox-bulk-result")
    expect(result).to_have_attribute("data-done", "3")  # none skipped as "not a plain approval"
    expect(result).to_have_attribute("data-skipped", "0")
    expect(page.get_by_test_id("inbox-empty")).to_be_visible()


def test_the_inbox_page_shows_no_other_thread_s_audit_trail(page: Page, running_app: RunningApp):
    """The README's /inbox showed the loaded thread's decisions beside requests of other threads."""
    page.goto(running_app.url + "/")
    page.get_by_test_id("thread-new").click()
    _send(page, "clean up")  # a thread that waits
    _question(page, "delete_files")
    page.get_by_test_id("thread-new").click()
    _send(page, "clean up again")
    page.get_by_test_id("app-no").click()  # a decision in the thread the chat shows
    expect(page.get_by_test_id("audit-entry")).to_have_count(1)  # the trail is the chat's, beside it
    page.get_by_role("link", name="Inbox").click()
    expect(page.get_by_test_id("inbox-item")).to_have_count(1)
    expect(page.get_by_test_id("audit-entry")).to_have_count(0)  # no decision of a thread it does not list
