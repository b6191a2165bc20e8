"""The demo's people sign in (contracts §6.2): ``/login``, ``whoami`` on every page, ``logout``, and ``/team``.

The e2e session runs the app with ``INTERRUPT_CHAT_DEMO_PEOPLE=1`` (conftest): alice, bob, carol and
dave, password ``<id>-demo``, in a fresh login database.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from playwright.sync_api import Page, expect

from tests.e2e.conftest import Chat

LOAD = 120_000  # the first visit of a page compiles it (dev server)


def sign_in(page: Page, app_url: str, user: str, password: str, then: str = "") -> None:
    page.goto(app_url + "/login" + (f"?next={then}" if then else ""))
    expect(page.get_by_test_id("whoami")).to_have_attribute("data-person", "", timeout=LOAD)
    page.get_by_test_id("login-user").fill(user)
    page.get_by_test_id("login-password").fill(password)
    page.get_by_test_id("login-submit").click()


def whoami(page: Page):
    return page.get_by_test_id("whoami")


def test_bob_signs_in_is_named_on_every_page_and_signs_out(page: Page, app_url: str):
    sign_in(page, app_url, "bob", "bob-demo")
    expect(page).to_have_url(app_url + "/", timeout=LOAD)
    expect(whoami(page)).to_have_attribute("data-person", "bob", timeout=LOAD)
    for path in ("/inbox", "/decide/no-such-token"):  # a page of the site's layout, and the decision link's own
        page.goto(app_url + path)
        expect(whoami(page)).to_have_attribute("data-person", "bob", timeout=LOAD)
    page.goto(app_url + "/")
    expect(whoami(page)).to_have_attribute("data-person", "bob", timeout=LOAD)
    page.get_by_test_id("logout").click()
    expect(whoami(page)).to_have_attribute("data-person", "")
    expect(page.get_by_test_id("logout")).to_have_count(0)
    expect(whoami(page).get_by_role("link", name="Sign in")).to_have_attribute("href", "/login")
    page.reload()  # the session is gone, not only the page's state
    expect(page.get_by_test_id("whoami").get_by_role("link", name="Sign in")).to_be_visible(timeout=LOAD)
    expect(whoami(page)).to_have_attribute("data-person", "")


def test_a_wrong_password_stays_on_login_with_an_error(page: Page, app_url: str):
    sign_in(page, app_url, "bob", "alice-demo")
    expect(page.get_by_test_id("login-error")).to_be_visible()
    assert urlsplit(page.url).path.rstrip("/") == "/login"  # a production build serves /login/
    expect(page.get_by_test_id("login-password")).to_have_value("")
    expect(whoami(page)).to_have_attribute("data-person", "")
    sign_in(page, app_url, "nobody", "nobody-demo")
    expect(page.get_by_test_id("login-error")).to_be_visible()
    assert urlsplit(page.url).path.rstrip("/") == "/login"  # a production build serves /login/


def test_team_is_for_signed_in_people_only(page: Page, app_url: str):
    page.goto(app_url + "/team")
    expect(page.get_by_test_id("chat-signin")).to_be_visible(timeout=LOAD)
    expect(page.get_by_test_id("chat-input")).to_be_disabled()
    expect(whoami(page)).to_have_attribute("data-person", "")
    sign_in(page, app_url, "carol", "carol-demo", then="/team")
    expect(page).to_have_url(re.compile(re.escape(app_url) + r"/team/?$"), timeout=LOAD)  # prod: /team/
    expect(whoami(page)).to_have_attribute("data-person", "carol", timeout=LOAD)
    expect(page.get_by_test_id("chat-input")).to_be_enabled(timeout=LOAD)
    expect(page.get_by_test_id("chat-signin")).to_have_count(0)


def test_a_sign_in_never_leads_off_the_site(page: Page, app_url: str):
    sign_in(page, app_url, "dave", "dave-demo", then="//example.test/")
    expect(page).to_have_url(app_url + "/", timeout=LOAD)
    expect(whoami(page)).to_have_attribute("data-person", "dave", timeout=LOAD)


def test_the_pay_invoice_chip_asks_for_a_tool_approval(page: Page, app_url: str):
    sign_in(page, app_url, "alice", "alice-demo")
    expect(whoami(page)).to_have_attribute("data-person", "alice", timeout=LOAD)
    chat = Chat(page, app_url)
    expect(chat.input).to_be_visible(timeout=LOAD)
    page.get_by_test_id("thread-new").click()  # alice's newest thread may be another test's (tests/e2e/test_people.py)
    expect(chat.messages("user")).to_have_count(0)
    expect(chat.input).to_be_enabled()
    page.locator('[data-testid="scenario-chip"][data-scenario="pay invoice 12000"]').click()
    chat.wait("interrupted")
    card = chat.card()
    expect(card).to_have_attribute("data-reason", "tool_call")
    expect(card).to_have_attribute("data-expired", "false")
    expect(page.locator('[data-testid="tool-call"][data-tool-name="pay_invoice"]')).to_have_count(1)
    expect(card).to_contain_text("INV-12000")
