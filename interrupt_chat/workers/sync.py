"""Live sync: every page of one owner that shows a thread reflects each change to it, at once.

The database stays the arbiter; this module only tells pages to look. Each worker keeps the tabs
whose events it handled (their socket lives there): owner key -> client token -> the chat state
and the thread it shows. A write of a thread (a claim, a run's end, an answer, a rename, a
delete) sends a notice ``(owner, thread)``; a running turn also sends its rows, at most every
:data:`LIVE_INTERVAL` seconds. With Redis (several workers) notices go through a pub/sub channel
that every worker hears; without it they stay in the process. A worker that hears a notice
refreshes each of its tabs of that owner through ``app.modify_state``: the shown thread from the
database (or the running turn's rows), the thread list, the inbox if the tab showed it, the audit
trail. Nothing is polled (docs/decisions/0018).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

import reflex as rx

from ..model.protocols import StateLike
from . import lane, runs
from .proxy_reads import behind, tab_token

if TYPE_CHECKING:
    from ..agui import AgentSession, Transcript

__all__ = ["CHANNEL", "LIVE_INTERVAL", "Notice", "changed", "follow_later", "forget", "live", "set_follower", "watch",
           "watch_page"]

log = logging.getLogger(__name__)

CHANNEL = "interrupt_chat:sync"
TASK_NAME = "interrupt_chat.workers.sync"  # a tab's follower
LIVE_INTERVAL = 0.3  # seconds between two pushes of a running turn's rows to the other tabs
MAX_TABS_PER_OWNER = 64
MAX_OWNERS = 10_000
MAX_WAITING = 64  # notices waiting for one tab's follower (more: the oldest of a kind and thread go)


@dataclass(frozen=True)
class Watch:
    """One tab of an owner: its chat state and the thread it shows."""

    state: str  # the chat state's full name
    thread_id: str


@dataclass
class Notice:
    """A thread changed (``rows`` is None), or its running turn streamed (``rows``: the turn's rows)."""

    owner: str
    thread_id: str
    origin: str = ""  # the client token that made the change (it shows it already)
    rows: list[dict[str, Any]] | None = None
    step: str = ""
    revision: int = 0  # the thread's revision after the change, when the sender knows it (0: read it)
    trail: bool = False  # only the thread's audit trail changed (decisions recorded): the thread was not written
    first: bool = False  # sent on a person's decision's way (a card surfaced, an answer): followed first (lane)

    def dumps(self) -> str:
        """The notice as JSON (what the channel carries)."""
        return json.dumps(dataclasses.asdict(self), separators=(",", ":"), default=str)

    @classmethod
    def loads(cls, data: Any) -> Notice:
        """A notice from the channel's JSON."""
        raw = json.loads(data)
        revision = raw.get("revision")
        return cls(owner=str(raw["owner"]), thread_id=str(raw["thread_id"]), origin=str(raw.get("origin") or ""),
                   rows=raw.get("rows"), step=str(raw.get("step") or ""),
                   revision=revision if type(revision) is int and revision > 0 else 0, trail=raw.get("trail") is True,
                   first=raw.get("first") is True)

    def then(self, later: Notice) -> Notice | None:
        """This notice and ``later`` (the next one for the same tab) as one, if one follower can do both; else None.

        A follower reads the database when it runs, so a change's notice that waits covers the
        changes to the same thread that come after it: two changes are one (at the higher revision
        known; 0, read it, if either is unknown), a change covers the trail's, and a turn's latest rows
        replace the rows before them. A change and a turn's rows stay apart, in their order.
        """
        if (later.owner, later.thread_id, later.rows is None) != (self.owner, self.thread_id, self.rows is None):
            return None
        if later.rows is not None or self.trail:
            joined = later
        elif later.trail:
            joined = self
        else:
            known = max(self.revision, later.revision) if self.revision and later.revision else 0
            joined = dataclasses.replace(later, revision=known)
        first = self.first or later.first  # either was on a person's decision's way: both are
        return joined if joined.first == first else dataclasses.replace(joined, first=first)


_watchers: OrderedDict[str, OrderedDict[str, Watch]] = OrderedDict()  # this process's tabs, by owner key
# (owner, thread) -> when its rows were last sent, and their shape then (_shape)
_last_live: dict[tuple[str, str], tuple[float, int]] = {}


class Watched(Protocol):
    """What live sync reads of a chat's state: whose threads it shows, and which one."""

    _owner_key: str
    thread_id: str


def watch(chat: StateLike) -> None:
    """Remember that this tab shows ``chat.thread_id`` of its owner (inside the lock; cheap)."""
    state = cast(Watched, behind(chat))
    watch_page(state._owner_key, tab_token(chat), chat.get_full_name(), state.thread_id)


def watch_page(owner: str, token: str, state_name: str, thread_id: str) -> None:
    """Remember that tab ``token`` shows ``owner``'s ``thread_id`` in the state ``state_name`` (a chat, ``/decide``)."""
    if not owner or not token:
        return
    tabs = _watchers.setdefault(owner, OrderedDict())
    tabs[token] = Watch(state_name, thread_id)
    tabs.move_to_end(token)
    _watchers.move_to_end(owner)
    while len(tabs) > MAX_TABS_PER_OWNER:
        tabs.popitem(last=False)
    while len(_watchers) > MAX_OWNERS:
        _watchers.popitem(last=False)
    if not runs._registry.listening():  # this worker hears the other workers' notices from now on
        task = asyncio.get_running_loop().create_task(runs._registry.listen(),
                                                      name="interrupt_chat.workers.sync.listen",
                                                      context=runs.detached_context())
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)


async def changed(owner: str, thread_id: str, origin: str = "", revision: int = 0, *, trail: bool = False) -> None:
    """Tell every page of ``owner`` that ``thread_id`` changed in the database (now at ``revision``, if known).

    ``trail``: only its audit trail did (decisions recorded; the thread was not written).
    """
    if owner and thread_id:
        _last_live.pop((owner, thread_id), None)
        await _send(Notice(owner, thread_id, origin, revision=revision, trail=trail, first=lane.holding()))


async def live(owner: str, session: AgentSession, origin: str) -> None:
    """Send the running turn's rows to the owner's other tabs: what is new at once, growth every :data:`LIVE_INTERVAL`.

    A new message, a message's first text and a new tool call go at once (:func:`_shape`): the
    turn's first text is not held back for the interval that its ``RUN_STARTED``'s push (the
    user's row alone) began. A text that only grows is sent again at most every
    :data:`LIVE_INTERVAL` seconds.
    """
    if not owner or not _anyone_else(owner, origin):
        return
    transcript = session.transcript
    key, now, shape = (owner, session.thread_id), time.monotonic(), _shape(transcript)
    last, sent = _last_live.get(key, (0.0, -1))
    if now - last < LIVE_INTERVAL and shape == sent:
        return
    _last_live[key] = now, shape
    while len(_last_live) > MAX_OWNERS:
        _last_live.pop(next(iter(_last_live)))
    from ..model.views import message_rows  # the rows with their whole text: other tabs were sent no stream

    rows = message_rows(transcript.messages[transcript.tail_start:], transcript)
    await _send(Notice(owner, session.thread_id, origin, [dataclasses.asdict(row) for row in rows],
                       transcript.step or ""))


def _shape(transcript: Transcript) -> int:
    """The running turn's messages, those of them with text, and their tool calls: it grows with each new thing.

    A text's growth leaves it as it is. (A few messages: the turn's, not the thread's.)
    """
    tail = transcript.messages[transcript.tail_start:]
    return len(tail) + sum(bool(message.content) + len(message.tool_call_ids) for message in tail)


def _anyone_else(owner: str, origin: str) -> bool:
    """Whether another tab may show this owner's threads: one of this process's, or (with Redis) anywhere."""
    if runs._registry.redis_url():
        return True
    return any(token != origin for token in _watchers.get(owner, {}))


async def _send(notice: Notice) -> None:
    if await runs._registry.publish(CHANNEL, notice.dumps()):
        return  # every worker hears it, this one included
    deliver(notice)


def deliver(notice: Notice) -> None:
    """A notice heard: refresh this process's tabs of its owner.

    Each tab has one follower at a time, in a task of its own: the notices that come while it
    works wait for it, in order, and one that the last waiting can take on joins it
    (:meth:`Notice.then`). A burst of changes (an answer's claim, then its audit entries) costs the
    tab one refresh, and a running turn's rows wait behind no refresh that is already out of date.
    """
    if _follower is None:  # nothing assembled a chat that follows: the tabs refresh before acting anyway
        return
    for token, seen in list(_watchers.get(notice.owner, {}).items()):
        if token == notice.origin:
            continue
        if notice.rows is not None and seen.thread_id != notice.thread_id:
            continue  # streamed rows concern only the tabs that show that thread
        waiting = _waiting.get(token)
        if waiting is not None:  # this tab's follower is at work: the notice is its next
            _queue(waiting, seen, notice)
            continue
        _waiting[token] = []
        _start(token, seen, notice)


def _start(token: str, seen: Watch, notice: Notice) -> None:
    follower = _follower
    if follower is None:
        _waiting.pop(token, None)
        return
    # a context of its own: nothing of the writer's event (its tab, a server-side answer's owner) leaks in
    task = asyncio.get_running_loop().create_task(_follow(follower, token, seen, notice), name=TASK_NAME,
                                                  context=runs.detached_context())
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


def _queue(waiting: list[tuple[Watch, Notice]], seen: Watch, notice: Notice) -> None:
    """Put a notice behind a tab's busy follower: joined with the one before it when they go together.

    A running turn's rows go ahead of the trail's notices waiting at the end (they touch nothing of
    each other): the turn is drawn first.
    """
    at = len(waiting)
    if notice.rows is not None:
        while at and waiting[at - 1][1].trail:
            at -= 1
    joined = waiting[at - 1][1].then(notice) if at else None
    if joined is not None:
        waiting[at - 1] = seen, joined
        return
    waiting.insert(at, (seen, notice))
    if len(waiting) > MAX_WAITING:  # a tab far behind: the newest notice of each kind per thread is enough
        last = {(n.thread_id, n.rows is None, n.trail): i for i, (_seen, n) in enumerate(waiting)}
        waiting[:] = [waiting[i] for i in sorted(last.values())][-MAX_WAITING:]


def follow_later(token: str, seen: Watch, notice: Notice) -> None:
    """From a tab's follower: follow ``notice`` too, once what waits for it now is done (e.g. the trail)."""
    waiting = _waiting.get(token)
    if waiting is None:  # (called from elsewhere: a follower of its own)
        _waiting[token] = waiting = []
        _start(token, seen, notice)
        return
    _queue(waiting, seen, notice)


async def _follow(follower: Callable[[str, Watch, Notice], Coroutine[Any, Any, None]], token: str, seen: Watch,
                  notice: Notice) -> None:
    """Bring one tab up to date with a notice, then with those that came meanwhile, one after the other."""
    try:
        while True:
            try:
                await _follow_one(follower, token, seen, notice)
            except Exception:  # (the follower logs its own): the next notice is followed all the same
                log.exception("sync: a follower failed")
            waiting = _waiting.get(token)
            if not waiting:
                return
            seen, notice = waiting.pop(0)
    finally:
        _waiting.pop(token, None)


async def _follow_one(follower: Callable[[str, Watch, Notice], Coroutine[Any, Any, None]], token: str,
                      seen: Watch, notice: Notice) -> None:
    """A notice on a person's decision's way (a card, an answer) holds other chats' streams; others wait for it."""
    if notice.first:  # (a key of its own: the tab's own click, or its event's hold, is the tab token's)
        with lane.first(token + " follows", server=True):
            await follower(token, seen, notice)
        return
    if (held := lane.blocked()) is not None:
        await held
    await follower(token, seen, notice)


_tasks: set[asyncio.Task[None]] = set()
_waiting: dict[str, list[tuple[Watch, Notice]]] = {}  # client token -> the notices its busy follower takes next


def _on_message(data: Any) -> None:
    try:
        notice = Notice.loads(data)
    except (TypeError, ValueError, KeyError) as exc:
        log.warning("sync: ignoring a malformed notice: %s", exc)
        return
    deliver(notice)


runs.HANDLERS[CHANNEL] = _on_message


_follower: Callable[[str, Watch, Notice], Coroutine[Any, Any, None]] | None = None


def set_follower(follower: Callable[[str, Watch, Notice], Coroutine[Any, Any, None]]) -> None:
    """Who brings a tab up to date with a notice (the chat's side: ``interrupt_chat.approvals.follow``)."""
    global _follower
    _follower = follower


def forget(owner: str, token: str) -> None:
    """Stop telling this tab about ``owner``'s threads (it serves someone else now, or is gone)."""
    tabs = _watchers.get(owner)
    if tabs is not None:
        tabs.pop(token, None)
        if not tabs:
            _watchers.pop(owner, None)


@contextlib.asynccontextmanager
async def _modify(token: str, state_name: str) -> AsyncIterator[Any]:
    """The tab's chat state, locked (``app.modify_state``); None when the tab's socket is gone."""
    from reflex.istate.manager.token import BaseStateToken
    from reflex.utils import prerequisites

    app = prerequisites.get_and_validate_app().app
    namespace = app.event_namespace
    if namespace is None or token not in namespace._token_manager.token_to_socket:
        yield None
        return
    state_cls = rx.State.get_class_substate(state_name)
    async with app.modify_state(BaseStateToken(ident=token, cls=state_cls)) as state:
        page = state if isinstance(state, state_cls) else await state.get_state(state_cls)
        yield page


modify: Callable[[str, str], contextlib.AbstractAsyncContextManager[Any]] = _modify
