"""Issue 38 §4: decision links take one spelling, are used by what they say, and answer approvals only.

Tabs are ``rx.State`` trees against the demo agent on loopback; the ``/decide`` page is its state
(``DecideState``) with the link's URL as its router's, driven the way the page drives it.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import reflex as rx
from reflex.istate.data import ReflexURL, RouterData

import interrupt_chat as ic
from interrupt_chat.approvals import decide, links
from interrupt_chat.approvals.decide import DecideState
from interrupt_chat.store import secrets as stored_secrets
from tests.unit.tabs import database_fixture, demo_agent_fixture, page_fixture  # noqa: F401 - fixtures
from tests.unit.test_consistency import Tab, resumes

pytestmark = pytest.mark.loopback


@pytest.fixture(scope="module")
def chat(agent) -> ic.Chat:
    return ic.Chat(agent[0], name="sec-links")


async def _link(tab: Tab) -> tuple[str, str]:
    [interrupt_id] = tab.ids()
    await links.ready()
    url = links.url_for(tab.chat._owner_key, tab.session, interrupt_id)
    assert url
    return url.rsplit("/", 1)[-1], interrupt_id


def _page(token: str) -> DecideState:
    """The ``/decide/<token>`` page of a browser without the owner's cookie."""
    page: DecideState = rx.State().get_substate(DecideState.get_full_name().split("."))  # type: ignore[assignment]
    page.router = RouterData(url=ReflexURL(f"http://localhost:3000{links.DECIDE_PATH}{token}"))
    return page


ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _spellings(token: str) -> list[str]:
    """Other spellings of the same signature bytes, each of which a lenient base64 decoder reads alike."""
    body, signature = token.split(".")
    assert len(signature) == 43  # 32 bytes: the last character's 2 low bits are unused
    flipped = ALPHABET[ALPHABET.index(signature[-1]) ^ 1]
    out = [f"{body}.{signature}=", f"{body}.{signature[:-1]}{flipped}", f"{body}.{signature[:5]}!{signature[5:]}",
           f"{body}.{signature[:5]}\n{signature[5:]}"]
    if "-" in signature or "_" in signature:  # the standard alphabet's spelling of the same bits
        out.append(f"{body}.{signature.replace('-', '+').replace('_', '/')}")
    return out


def test_a_token_has_one_spelling(monkeypatch):
    monkeypatch.setenv(links.SECRET_ENV, "sec-links secret")
    token = links.make("o|c", "thread-1", "int-1", "run-1", time.time() + 60)
    assert links.parse(token) is not None
    for spelling in _spellings(token):
        assert links.parse(spelling) is None, repr(spelling)


async def test_a_link_is_used_by_what_it_says_not_how_it_is_spelled(chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("approval")
    token, interrupt_id = await _link(tab)
    link = links.parse(token)
    assert link is not None
    page = _page(token)
    await DecideState.approve.fn(page)
    assert (page.phase, page.action) == ("done", "resolved")
    assert stored_secrets.used(database, link.use_id)  # the use is keyed on the payload
    for spelling in _spellings(token):  # and no other spelling reaches the page's answer
        assert (await decide._find(_page(spelling), spelling)).phase == "invalid"
    deadline = time.monotonic() + 10
    while not resumes(agent[1].records(tab.chat.thread_id), interrupt_id):  # the resume runs in the background
        assert time.monotonic() < deadline, "no resume"
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)
    assert len(resumes(agent[1].records(tab.chat.thread_id), interrupt_id)) == 1


async def test_approve_and_reject_answer_only_an_approval(chat, agent, database):
    tab = await Tab(chat.state, agent[1]).load()
    await tab.send("choice")  # an enum form: "pick a color"
    token, interrupt_id = await _link(tab)
    found = await decide._find(_page(token), token)
    assert found.phase == "open" and found.card is not None and not found.card.plain  # the page offers no buttons
    page = _page(token)
    await DecideState.approve.fn(page)  # forged: the page never offered it
    assert page.phase == "open" and page.error == decide.IN_APP
    await DecideState.reject.fn(page)
    await asyncio.sleep(0.2)
    assert resumes(agent[1].records(tab.chat.thread_id), interrupt_id) == []  # nothing was sent
    assert database.decisions(tab.chat._owner_key, tab.chat.thread_id) == []
    assert not stored_secrets.used(database, links.parse(token).use_id)  # type: ignore[union-attr]
    assert not hasattr(DecideState, "submit")  # a form is answered in the app, never through a link
    approval = await Tab(chat.state, agent[1]).load()
    await approval.cls.new_thread.fn(approval.chat)
    await approval.send("approval")
    token, interrupt_id = await _link(approval)
    assert (await decide._find(_page(token), token)).card.plain  # type: ignore[union-attr]
    page = _page(token)
    await DecideState.reject.fn(page)
    assert (page.phase, page.action) == ("done", "rejected")
    deadline = time.monotonic() + 10
    while not resumes(agent[1].records(approval.chat.thread_id), interrupt_id):  # the resume runs in the background
        assert time.monotonic() < deadline, "no resume"
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)
    [resume] = resumes(agent[1].records(approval.chat.thread_id), interrupt_id)
    assert resume["resume"][0]["payload"] == {"approved": False}
