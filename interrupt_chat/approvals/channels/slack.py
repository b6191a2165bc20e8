"""Slack: a direct message per recipient with Approve and Reject, its clicks, and the message updated once decided.

Configuration (issue 42, contracts §6.3): ``INTERRUPT_CHAT_SLACK_BOT_TOKEN`` (the bot's ``xoxb-`` token: Slack
is on), ``INTERRUPT_CHAT_SLACK_SIGNING_SECRET`` (the app's signing secret: clicks are taken) and
``INTERRUPT_CHAT_SLACK_API_URL`` (default Slack's own, ``https://slack.com/api/``). Slack's Web API is called
through the official SDK (``slack_sdk``), never by hand.

- **The message** (:func:`post`, the outbox's ``slack`` deliverer): ``chat.postMessage`` to the person's
  Slack id, in Block Kit: who asks, the tool, its arguments, the message, the expiry, the approvals so far,
  Approve and Reject (each button's ``value`` is the recipient's own decision-link token) and a link to the
  app. A request that asks for a secret says only that a request waits in the app. Where Slack put it
  (``channel``, ``ts``) is kept, so the message is updated when the request is decided.
- **The update** (:func:`update`, ``slack-update``): ``chat.update`` to the outcome and who decided, with no
  button.
- **The click** (:func:`slack_routes`: ``POST /slack/interactions``): refused with 401 unless Slack's ``v0``
  signature of it verifies, with a timestamp within 5 minutes of now either way (:func:`verified`). The
  Slack user must be a person of the chat (``Person(slack=...)``) allowed to decide the request; the answer
  goes through :func:`~interrupt_chat.approvals.people.deciding.as_assignee`, claimed on the thread like
  every other, so exactly one resumes whatever the order of clicks in Slack, the app, links and mail. Slack
  gets its 200 within 3 seconds; the resume runs in the background.

No message, block or button carries an identity key: the outbox item's ``_owner`` is read for the
server's own look-ups only.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
from slack_sdk.errors import SlackClientError
from slack_sdk.signature import Clock, SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient
from sqlalchemy import and_, select
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from ...model.policies import approval_payload
from ...store import channels as store_channels
from ...store import requests as store_requests
from ...store.schema import requests_table
from ...store.threads_db import ThreadDBError
from ...tab import answers, persistence, server_secret
from .. import links
from ..people import core, deciding
from . import reach

if TYPE_CHECKING:
    from ...model.people import People, Person
    from ...store.threads_db import ThreadDB

__all__ = ["API_URL_ENV", "INTERACTIONS_PATH", "MAX_BODY", "SIGNING_SECRET_ENV", "TOKEN_ENV", "TOLERANCE_SECONDS",
           "blocks_for", "interactions", "post", "register", "slack_routes", "update", "verified"]

log = logging.getLogger(__name__)

TOKEN_ENV = reach.SLACK_TOKEN_ENV
SIGNING_SECRET_ENV = "INTERRUPT_CHAT_SLACK_SIGNING_SECRET"
API_URL_ENV = "INTERRUPT_CHAT_SLACK_API_URL"
INTERACTIONS_PATH = "/slack/interactions"
MAX_BODY = 64 * 1024  # a click's form body is a few KB; anything larger is refused before it is read whole
TOLERANCE_SECONDS = 300  # a signature's timestamp: within 5 minutes of now, either way
ACK_SECONDS = 2.0  # Slack wants its 200 within 3 s: what is not done by then goes on in the background
API_TIMEOUT = 10  # seconds for one Web API call (the outbox retries a failed one)
_FIELDS = 10  # Block Kit: at most 10 fields in a section
_VALUE_CHARS = 300
_TEXT_CHARS = 2900  # Block Kit: a section's text holds 3,000

INVALID = "This request cannot be decided from here any more: open it in the app."
EXPIRED = "These buttons have expired: open the request in the app."
UNKNOWN = "Your Slack account is not one this app knows, so you may not decide this request."
IN_APP = "Answer this request in the app: it asks for more than Approve or Reject."
BUSY = "The app is busy: try again in a moment."
WORKING = "Your decision is being recorded."
FAILED = "Your decision could not be recorded: try again, or open the request in the app."
DONE = {"approve": "You approved this request.", "reject": "You rejected this request."}
_HEADS = {"assigned": "Approval needed", "reminder": "Reminder: approval needed",
          "escalated": "Escalated to you: approval needed"}

_SAID = {answers.ANSWERED_ELSEWHERE: deciding.ALREADY, answers.DELETED_ELSEWHERE: deciding.ALREADY,
         "There was nothing to answer.": deciding.ALREADY,
         answers.EXPIRED_MESSAGE: "This request has expired."}  # a chat tab's words, as a Slack reply says them
_tasks: set[asyncio.Task[Any]] = set()  # the decisions running past their 200 (a reference keeps each alive)


# -- the Web API ---------------------------------------------------------------------------------------

def _api_url() -> str:
    return os.environ.get(API_URL_ENV, "").strip() or AsyncWebClient.BASE_URL


def _client() -> AsyncWebClient | None:
    """The SDK's client for the bot token (None: Slack is off); no retries of its own (the outbox retries)."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        return None
    return AsyncWebClient(token=token, base_url=_api_url(), timeout=API_TIMEOUT, retry_handlers=[])


_FAILURES = (SlackClientError, aiohttp.ClientError, TimeoutError, OSError, ValueError)


async def post(body: dict[str, Any]) -> bool:
    """The outbox's ``slack`` deliverer: one direct message; True when Slack took it (False: retried later)."""
    client = _client()
    if client is None:
        return True  # Slack was turned off meanwhile: nothing will ever send it
    try:
        answer = await client.chat_postMessage(channel=str(body.get("to") or ""), text=fallback_text(body),
                                               blocks=blocks_for(body), unfurl_links=False, unfurl_media=False)
    except _FAILURES as exc:
        log.info("slack: chat.postMessage failed (%s); it is tried again", _why(exc))
        return False
    channel, ts = str(answer.get("channel") or ""), str(answer.get("ts") or "")
    db = persistence.database()
    if db is not None and channel and ts:
        message = store_channels.SlackMessage(str(body.get("person") or ""), str(body.get("event") or ""), channel,
                                              ts)
        try:
            await persistence.db_call(store_channels.save_slack_message, db, str(body.get("_owner") or ""),
                                      str(body.get("thread_id") or ""), str(body.get("interrupt_id") or ""), message)
        except ThreadDBError:  # posted: not sent twice; only its update in place is lost
            log.warning("slack: a posted message could not be remembered; it will not be updated when decided")
        else:
            await _decided_meanwhile(db, body)
    return True


_FINAL = ("resolved", "cancelled", "rejected", "expired", "dismissed")


async def _decided_meanwhile(db: ThreadDB, body: dict[str, Any]) -> None:
    """A request decided while its message was being posted: that message is updated too.

    The decision's own updates read the messages kept before it; this one was kept after, so it is
    queued here (an update's id is its message's: queued twice, it is sent once).
    """
    owner, thread_id, interrupt_id = (str(body.get(k) or "") for k in ("_owner", "thread_id", "interrupt_id"))
    try:
        row = await persistence.db_read(store_requests.get, db, owner, thread_id, interrupt_id)
        if row is None or row.state == "open":
            return
        records = await persistence.db_read(db.decisions, owner, thread_id)
    except ThreadDBError:
        return
    record = next((d for d in reversed(records) if d.interrupt_id == interrupt_id and d.action in _FINAL), None)
    people = core.people_of(core.chat_of_key(owner))
    if record is not None and people is not None:
        await reach.decided(row, record.action, str((record.detail or {}).get("actor") or ""), people)


async def update(body: dict[str, Any]) -> bool:
    """The outbox's ``slack-update`` deliverer: a message updated in place to the outcome, with no button."""
    client = _client()
    if client is None:
        return True
    text = str(body.get("text") or body.get("outcome") or "Decided")
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": _escape(text)[:_TEXT_CHARS]}}]
    try:
        await client.chat_update(channel=str(body.get("to") or ""), ts=str(body.get("ts") or ""), text=text,
                                 blocks=blocks)
    except _FAILURES as exc:
        log.info("slack: chat.update failed (%s); it is tried again", _why(exc))
        return False
    return True


def _why(exc: BaseException) -> str:
    """What failed, without the request (Slack's error code, or the exception's type)."""
    response = getattr(exc, "response", None)
    error = response.get("error") if response is not None and hasattr(response, "get") else None
    status = getattr(response, "status_code", None)
    return f"{error or 'error'}, HTTP {status}" if status is not None else type(exc).__name__


def register() -> None:
    """Make :func:`post` and :func:`update` the outbox's ``slack`` and ``slack-update`` deliverers."""
    reach.DELIVERERS["slack"] = post
    reach.DELIVERERS["slack-update"] = update


# -- the message ---------------------------------------------------------------------------------------

def _escape(text: str) -> str:
    """Text for ``mrkdwn``: ``&``, ``<`` and ``>`` escaped, so nothing from an agent becomes a link or a mention."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _plain(text: str, limit: int) -> dict[str, Any]:
    return {"type": "plain_text", "text": (text[:limit - 1] + "…") if len(text) > limit else text or " ",
            "emoji": False}


def fallback_text(body: dict[str, Any]) -> str:
    """The notification's text (Slack shows it where blocks are not drawn)."""
    if body.get("masked"):
        return "A request waits for you: open the app"
    what = str(body.get("tool") or body.get("reason") or "a request")
    return f"{body.get('asker') or 'someone'} asks you to approve {what}"


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _VALUE_CHARS else text[:_VALUE_CHARS - 1] + "…"


def _fields(args: dict[str, Any]) -> list[dict[str, Any]]:
    """The arguments as a section's fields (at most 10: the last says how many more there are)."""
    items = [f"*{_escape(str(name))}*\n{_escape(_value(value))}" for name, value in args.items()]
    if len(items) > _FIELDS:
        items = [*items[:_FIELDS - 1], f"…and {len(items) - _FIELDS + 1} more arguments"]
    return [{"type": "mrkdwn", "text": text} for text in items]


def _context(body: dict[str, Any]) -> list[dict[str, Any]]:
    """When it expires (in each reader's own time zone), who it waits for, and the approvals so far."""
    said: list[str] = []
    expires = str(body.get("expires_at") or "")
    try:
        at = int(datetime.fromisoformat(expires).timestamp()) if expires else None
    except ValueError:
        at = None
    if at is not None:
        said.append(f"Expires <!date^{at}^{{date_short_pretty}} at {{time}}|{_escape(expires)}>")
    names = [str(n) for n in body.get("assignee_names") or []]
    if names:
        said.append("Waits for " + _escape(", ".join(names)))
    need, have = int(body.get("need") or 1), int(body.get("have") or 0)
    if need > 1:
        said.append(f"{have} of {need} approvals so far")
    return [{"type": "mrkdwn", "text": text} for text in said]


def _buttons(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Approve, Reject (their value: the recipient's own link token) and the app's link."""
    token = str(body.get("decide_url") or "").rpartition(links.DECIDE_PATH)[2]
    buttons: list[dict[str, Any]] = []
    if token and body.get("reason") != "input_required":  # a form is typed in the app
        buttons += [{"type": "button", "action_id": "approve", "style": "primary", "value": token,
                     "text": _plain("Approve", 75)},
                    {"type": "button", "action_id": "reject", "style": "danger", "value": token,
                     "text": _plain("Reject", 75)}]
    if body.get("open_url"):
        buttons.append({"type": "button", "action_id": "open", "url": str(body["open_url"]),
                        "text": _plain("Open in the app", 75)})
    return buttons


def blocks_for(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The direct message's Block Kit blocks for one outbox item (no identity key: never ``_owner``)."""
    if body.get("masked"):  # a secret to type: no field, no decision
        link = str(body.get("open_url") or "")
        text = f"A request waits for you: <{link}|open the app>" if link else "A request waits for you: open the app"
        return [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]
    what = str(body.get("tool") or body.get("reason") or "a request")
    head = _HEADS.get(str(body.get("event") or ""), _HEADS["assigned"])
    asks = f"*{_escape(str(body.get('asker') or 'someone'))}* asks you to approve *{_escape(what)}*"
    if body.get("title"):
        asks += f" in “{_escape(str(body['title']))}”"
    blocks: list[dict[str, Any]] = [{"type": "header", "text": _plain(f"{head}: {what}", 150)},
                                    {"type": "section", "text": {"type": "mrkdwn", "text": asks[:_TEXT_CHARS]}}]
    args = body.get("args")
    if isinstance(args, dict) and args:
        blocks.append({"type": "section", "fields": _fields(args)})
    if body.get("message"):
        blocks.append({"type": "section", "text": _plain(str(body["message"]), _TEXT_CHARS)})
    context = _context(body)
    if context:
        blocks.append({"type": "context", "elements": context})
    buttons = _buttons(body)
    if buttons:
        blocks.append({"type": "actions", "block_id": "decide", "elements": buttons})
    return blocks


# -- the click ---------------------------------------------------------------------------------------

class _At(Clock):
    """The SDK verifier's clock, read once: the window and the signature are checked at one instant."""

    def __init__(self, at: float) -> None:
        self.at = at

    def now(self) -> float:
        return self.at


def verified(secret: str, body: bytes, timestamp: str, signature: str, *, now: float | None = None) -> bool:
    """Slack's ``v0`` signature of ``body`` verifies, and its timestamp is within 5 minutes of now either way."""
    if not (secret and timestamp and signature) or not timestamp.isascii() or not timestamp.isdigit() \
            or len(timestamp) > 12:
        return False
    at = time.time() if now is None else now
    if abs(at - int(timestamp)) > TOLERANCE_SECONDS:
        return False  # checked here too: the window is ours, whatever the SDK's
    try:
        return SignatureVerifier(secret, clock=_At(at)).is_valid(body, timestamp, signature)
    except (UnicodeDecodeError, ValueError):
        return False


async def _bounded(request: Request) -> bytes | None:
    """The body, read only up to :data:`MAX_BODY` (None: larger, declared or not)."""
    declared = request.headers.get("content-length", "")
    if declared and (not declared.isdigit() or int(declared) > MAX_BODY):
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


@dataclass(frozen=True)
class Click:
    """One Approve or Reject click: which button, the link token it carries, who clicked, where to reply."""

    verb: str  # approve | reject
    token: str
    user: str  # the Slack user id
    response_url: str = ""


def click_of(body: bytes) -> Click | None:
    """The click a verified form body holds (None: another interaction, such as the app's link button)."""
    try:
        form = parse_qs(body.decode(), max_num_fields=50, strict_parsing=False)
        payload = json.loads(form.get("payload", [""])[0])
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(payload, dict) or payload.get("type") != "block_actions":
        return None
    actions, user = payload.get("actions"), payload.get("user")
    action = actions[0] if isinstance(actions, list) and actions else None
    if not isinstance(action, dict) or not isinstance(user, dict):
        return None
    verb, token, who = action.get("action_id"), action.get("value"), user.get("id")
    if verb not in DONE or not isinstance(token, str) or not isinstance(who, str) or not who:
        return None
    url = payload.get("response_url")
    return Click(verb, token, who, url if isinstance(url, str) else "")


async def interactions(request: Request) -> Response:
    """``POST /slack/interactions``: 401 unless signed by Slack; a click's reply within 3 s, its decision after."""
    secret = os.environ.get(SIGNING_SECRET_ENV, "").strip()
    if not secret:
        return PlainTextResponse("Unauthorized", status_code=401)
    body = await _bounded(request)
    if body is None:
        return PlainTextResponse("Payload too large", status_code=413)
    headers = request.headers
    if not verified(secret, body, headers.get("x-slack-request-timestamp", ""), headers.get("x-slack-signature", "")):
        return PlainTextResponse("Unauthorized", status_code=401)
    click = click_of(body)
    if click is None:
        return Response(status_code=200)  # acknowledged: nothing of ours to do (the app's link, say)
    text = await _answer(click)
    return JSONResponse({"response_type": "ephemeral", "replace_original": False, "text": text})


def slack_routes() -> list[Route]:
    """The Starlette route Slack posts clicks to: ``POST /slack/interactions``.

    Mount it on the app's backend, and give Slack ``https://<your backend>/slack/interactions`` as the
    app's interactivity request URL:

    ```python
    from starlette.applications import Starlette

    app = rx.App(api_transformer=Starlette(routes=ic.slack_routes()))
    ```

    A click is taken only with ``INTERRUPT_CHAT_SLACK_SIGNING_SECRET`` set and Slack's signature of it
    verified (else 401, and nothing changes); the Slack user must be a person the request waits for.
    The guide "Approvals in Slack" sets up the Slack app step by step.

    Returns:
        The route, to put in a Starlette app's ``routes``.
    """
    return [Route(INTERACTIONS_PATH, interactions, methods=["POST"])]


# -- deciding ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Decision:
    """A click that may decide: as whom, which request, and the answer its schema takes."""

    viewer: str  # the person's owner key in the chat
    chat_cls: Any
    owner: str
    link: links.Link
    payload: Any


async def _answer(click: Click) -> str:
    """The reply to a click: why not, or the decision's outcome if it is done within :data:`ACK_SECONDS`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + ACK_SECONDS
    try:
        found = await asyncio.wait_for(_check(click), ACK_SECONDS)
    except (TimeoutError, ThreadDBError):
        return BUSY
    except Exception:  # the app's people directory, say: Slack still gets its answer
        log.exception("slack: a click could not be checked")
        return FAILED
    if isinstance(found, str):
        _later(_respond(click.response_url, found))
        return found
    task = _later(_decide(found, click))
    done, _ = await asyncio.wait({task}, timeout=max(0.05, deadline - loop.time()))
    return task.result() if done else WORKING


def _later(coro: Any) -> asyncio.Task[Any]:
    task = asyncio.get_running_loop().create_task(coro, name="interrupt_chat.slack")
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return task


async def _check(click: Click) -> _Decision | str:
    """Who clicked, whether they may decide the request the token names, and what the answer is (else why not)."""
    await server_secret.ready()
    link = links.parse(click.token)
    db = persistence.database()
    if link is None or db is None:
        return INVALID
    if link.expired:
        return EXPIRED
    owner = await persistence.db_read(_owner_of, db, link)
    chat_cls = core.chat_of_key(owner) if owner else None
    people = core.people_of(chat_cls)
    if owner is None or chat_cls is None or people is None:
        return INVALID
    person = person_of(people, link, click.user)
    if person is None:
        return UNKNOWN
    row = await persistence.db_read(store_requests.get, db, owner, link.thread_id, link.interrupt_id)
    if row is None or row.state != "open" or row.run_id != link.run_id:
        return deciding.ALREADY
    if await core.decider(people, person.id, row) is None:
        return deciding.NOT_YOURS.format(names=core.names(people, row.assignees))
    payload = await _payload(db, owner, link, "allow" if click.verb == "approve" else "deny")
    if isinstance(payload, str):
        return payload
    return _Decision(f"{person.id}|{chat_cls.get_full_name()}", chat_cls, owner, link, payload)


def person_of(people: People, link: links.Link, slack_user: str) -> Person | None:
    """The chat's person with this Slack id: the link's own recipient, else one of the listed people."""
    named = people.person(link.person) if link.person else None
    if named is not None and named.slack and named.slack == slack_user:
        return named
    return next((p for p in people.people() if p.slack and p.slack == slack_user), None)


async def _payload(db: ThreadDB, owner: str, link: links.Link, effect: str) -> Any:
    """What Approve or Reject sends, shaped as the interrupt's schema asks (a string: why it cannot)."""
    stored = await persistence.db_read(db.read, owner, link.thread_id)
    session = stored.session if stored is not None else None
    pending = session.tracker.pending if session is not None else None
    if session is None or pending is None or (pending.run_id or "") != link.run_id \
            or link.interrupt_id in session.tracker.answers:
        return deciding.ALREADY
    interrupt = next((i for i in pending.interrupts if i.id == link.interrupt_id), None)
    if interrupt is None:
        return deciding.ALREADY
    payload = approval_payload(interrupt, effect)
    return IN_APP if payload is None else payload


def _owner_of(db: ThreadDB, link: links.Link) -> str | None:
    """The asker's key whose hash the link carries, among the requests of that thread and interrupt."""
    t = requests_table
    with db._transaction("find a Slack click's request") as conn:
        owners = [row[0] for row in conn.execute(select(t.c.owner).where(
            and_(t.c.thread_id == link.thread_id, t.c.interrupt_id == link.interrupt_id)))]
    return next((o for o in owners if hmac.compare_digest(links.owner_hash(o).encode(), link.owner_hash.encode())),
                None)


async def _decide(found: _Decision, click: Click) -> str:
    """The decision itself (claimed on the thread: one resume whatever else answers), then the reply."""
    link = found.link
    try:
        refusal = await deciding.as_assignee(found.viewer, found.chat_cls, found.owner, link.thread_id,
                                             link.interrupt_id, link.run_id, "resolve", found.payload, "link")
    except Exception:  # the click is acknowledged: the person is told, the server goes on
        log.exception("slack: a click's decision failed")
        refusal = FAILED
    text = _SAID.get(refusal, refusal) or DONE[click.verb]
    _later(_respond(click.response_url, text))
    return text


async def _respond(url: str, text: str) -> None:
    """Tell the person who clicked (their ``response_url``: Slack's own hooks, or the configured API's host)."""
    parts = urlsplit(url)
    api = urlsplit(_api_url())
    if not url or not ((parts.scheme == "https" and parts.hostname == "hooks.slack.com")
                       or (parts.scheme, parts.netloc) == (api.scheme, api.netloc)):
        return
    try:
        await AsyncWebhookClient(url, timeout=API_TIMEOUT, retry_handlers=[]).send(
            text=text, response_type="ephemeral", replace_original=False)
    except _FAILURES as exc:
        log.info("slack: a reply to a click could not be sent (%s)", type(exc).__name__)
