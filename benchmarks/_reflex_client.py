"""A browser-less Reflex tab: Engine.IO 4 / Socket.IO 5 over a raw websocket, and a chat's answer as it arrives.

What the frontend does (``reflex_base/.templates/web/utils/state.js``, Reflex 0.10):

- connect ``ws://host:port/_event/?token=<tab token>&EIO=4&transport=websocket`` with the Reflex
  version as websocket subprotocol; the server opens with an Engine.IO ``0{sid, pingInterval, …}``;
- the Socket.IO CONNECT packet for the ``/_event`` namespace carries the hydrate event in its auth
  payload (``40/_event,{"event": {"name": "<root>.hydrate_and_load", "payload": {}, "router_data": …}}``),
  so the backend hydrates without an extra round trip;
- every event goes as ``42/_event,["event", {"name", "payload", "router_data"}]``; the backend answers
  with ``42/_event,["event", {"delta": {state: {var_rx_state_: value}}, "events": [...]}]``;
- Engine.IO pings (``2``) are answered with ``3``; events in an update whose name does not start
  with ``_`` are sent back, as the browser's queue does.

:class:`ChatView` reads a chat's text from both ways it can arrive: state deltas (``live`` /
``messages``: rows with ``content`` and ``tool_calls[].args``) and ``_call_script`` events whose
``javascript_code`` calls ``icStream`` (``window.icStream?.(<JSON>)`` today) with a list of
``[key, offset, text(, done)]`` chunks (``text``
is written at character ``offset`` of the text of stream ``key``; a row names its stream key in
``stream`` and carries a prefix of that text).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection

try:
    import orjson

    _loads: Callable[[str], Any] = orjson.loads
except ImportError:  # pragma: no cover - orjson comes with reflex
    _loads = json.loads

FIELD_MARKER = "_rx_state_"
LIVE_SUFFIX = "__live"  # a chat's current turn is the state ``<chat state>__live`` (registry: ``<Chat>_Live``)
ROOT_STATE = "reflex___state____state"
HYDRATE = f"{ROOT_STATE}.hydrate_and_load"
NAMESPACE = "/_event"
NONCE_RE = re.compile(r"Z[0-9a-f]{16}")


class ProtocolError(Exception):
    """The server said something this client does not understand (or refused the namespace)."""


@dataclass
class Frame:
    """One Socket.IO event packet received: its receive time, size and decoded update."""

    t: float
    raw: str
    update: dict[str, Any]


class ReflexSocket:
    """One tab's websocket to a Reflex backend."""

    def __init__(self, base_url: str, *, token: str | None = None, path: str = "/") -> None:
        """``base_url``: ``http://127.0.0.1:8000``; ``path``: the page the tab shows (router_data)."""
        self.token = token or str(uuid.uuid4())
        self.url = (base_url.replace("http://", "ws://").replace("https://", "wss://").rstrip("/")
                    + f"{NAMESPACE}/?token={self.token}&EIO=4&transport=websocket")
        self.router_data = {"pathname": path, "asPath": path}
        # a browser's handshake names the page's origin; the backend gives an identity only to its own (issue 38)
        self.origin = base_url.rstrip("/")
        self.ws: ClientConnection | None = None
        self.open_info: dict[str, Any] = {}
        self.frames_in = 0
        self.chars_in = 0

    async def connect(self, timeout: float = 30.0) -> None:
        """Open the websocket and the namespace; the hydrate event rides in the CONNECT packet."""
        self.ws = await websockets.connect(self.url, subprotocols=[version("reflex")],  # type: ignore[list-item]
                                           max_size=None, ping_interval=None, open_timeout=timeout,
                                           close_timeout=2, compression="deflate",
                                           origin=self.origin)  # type: ignore[arg-type]
        first = await asyncio.wait_for(self.ws.recv(), timeout)
        if not isinstance(first, str) or not first.startswith("0"):
            raise ProtocolError(f"expected an Engine.IO open packet, got {str(first)[:80]!r}")
        self.open_info = json.loads(first[1:])
        auth = {"event": {"name": HYDRATE, "payload": {}, "router_data": self.router_data}}
        await self.ws.send(f"40{NAMESPACE}," + json.dumps(auth))

    async def emit(self, name: str, payload: dict[str, Any] | None = None) -> None:
        """Send one Reflex event (``name`` is the full ``<state path>.<handler>``)."""
        assert self.ws is not None
        event = {"name": name, "payload": payload or {}, "router_data": self.router_data}
        await self.ws.send(f"42{NAMESPACE}," + json.dumps(["event", event]))

    async def frames(self) -> Any:
        """Yield every ``event`` packet as a :class:`Frame` (pings answered, CONNECT acknowledged).

        Raises:
            ProtocolError: the namespace was refused or disconnected by the server.
            websockets.ConnectionClosed: the socket closed.
        """
        assert self.ws is not None
        prefix = f"42{NAMESPACE},"
        while True:
            raw = await self.ws.recv()
            t = time.time()
            if not isinstance(raw, str):
                continue  # binary attachments: Reflex sends none
            self.frames_in += 1
            self.chars_in += len(raw)
            if raw.startswith(prefix):
                packet = _loads(raw[len(prefix):])
                if packet and packet[0] == "event" and len(packet) > 1 and isinstance(packet[1], dict):
                    yield Frame(t, raw, packet[1])
                    for event in packet[1].get("events") or []:  # the browser queues these and sends them back
                        name = event.get("name", "") if isinstance(event, dict) else ""
                        if name and not name.startswith("_"):
                            await self.emit(name, event.get("payload") or {})
            elif raw == "2":
                await self.ws.send("3")
            elif raw.startswith(f"44{NAMESPACE}") or raw.startswith(f"41{NAMESPACE}"):
                raise ProtocolError(f"namespace refused or closed by the server: {raw[:200]}")
            # "40/_event,{sid}" (connect ack), other events (e.g. a state mismatch notice): nothing to do

    async def close(self) -> None:
        """Leave the namespace and close the websocket."""
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.send(f"41{NAMESPACE},")
            with contextlib.suppress(Exception):
                await self.ws.close()


def strip_marker(name: str) -> str:
    """``live_rx_state_`` -> ``live``."""
    return name[: -len(FIELD_MARKER)] if name.endswith(FIELD_MARKER) else name


@dataclass
class _Entry:
    """A streamed text as ``stream_text.jsx`` keeps it: seeded by the row var, extended by chunks."""

    text: str = ""
    seeded: bool = False
    done: bool = False
    gap: bool = False
    queued: list[tuple[int, str, bool]] = field(default_factory=list)


@dataclass
class ChatView:
    """What a tab knows of one chat state: its texts by message (or stream) key, status, error, notice.

    Rows without a stream key carry their whole text (keyed by message id). A row with a ``stream``
    key carries a prefix (``base``) of a text that ``icStream`` chunks extend; the two meet as in
    ``interrupt_chat/components/stream_text.jsx``: the longer wins when one extends the other, else
    the var replaces the text; a chunk whose offset lies past the known text is a gap.
    """

    state_key: str | None = None  # the chat's full state path; None: the first delta with its ``status`` names it
    match: str = "chat_default_"  # how to recognise it without a name (the demo's "/" chat)
    texts: dict[str, str] = field(default_factory=dict)  # rows without a stream key, by message id
    entries: dict[str, _Entry] = field(default_factory=dict)  # streamed texts, by stream key
    vars: dict[str, Any] = field(default_factory=dict)  # the chat's scalar vars (status, error, notice, loaded…)
    stream_chunks: int = 0  # icStream chunks applied
    stream_gaps: int = 0  # icStream chunks whose offset lay past the text known so far
    script_errors: int = 0  # _call_script events this view could not read
    gap_keys: set[str] = field(default_factory=set)  # keys with a gap since the last call of take_gaps()

    def apply(self, update: dict[str, Any]) -> list[tuple[str, str, int]]:
        """Apply one update; returns ``(key, text, unchanged_prefix_len)`` for each text that changed."""
        changed: list[tuple[str, str, int]] = []
        delta = update.get("delta") or {}
        for state, values in delta.items():  # name the chat first: its current turn may come before it
            if self.state_key is None and isinstance(values, dict):
                self._name_chat(state, values)
        for state, values in delta.items():
            if not isinstance(values, dict) or not self._is_chat(state):
                continue
            for name, value in values.items():
                var = strip_marker(name)
                if var == "history" and isinstance(value, dict):  # a delta of the history's rows (paging.py)
                    value = value.get("rows")
                if var in ("live", "history") and isinstance(value, list):
                    for row in value:
                        if isinstance(row, dict):
                            self._row(row, changed)
                elif not isinstance(value, list | dict):
                    self.vars[var] = value
        for event in update.get("events") or []:
            if isinstance(event, dict) and event.get("name") == "_call_script":
                self._script(event.get("payload") or {}, changed)
        return changed

    def take_gaps(self) -> set[str]:
        """Keys that lost part of their text since the last call (the page would call ``resync_stream``)."""
        gaps, self.gap_keys = self.gap_keys, set()
        return gaps

    def text_of(self, key: str) -> str:
        """A text by message id (whole rows) or stream key."""
        entry = self.entries.get(key)
        return entry.text if entry is not None else self.texts.get(key, "")

    def _name_chat(self, state: str, values: dict[str, Any]) -> None:
        if self.match in state and not state.endswith(LIVE_SUFFIX) and \
                any(strip_marker(k) in ("history", "status") for k in values):
            self.state_key = state

    def _is_chat(self, state: str) -> bool:
        """The chat's state, or its current turn's (``live``: a state of its own, interrupt_chat/tab/live.py)."""
        return self.state_key is not None and state in (self.state_key, self.state_key + LIVE_SUFFIX)

    def _row(self, row: dict[str, Any], changed: list[tuple[str, str, int]]) -> None:
        key = str(row.get("id", ""))
        self._text(key, str(row.get("stream") or ""), str(row.get("content") or ""), changed)
        for call in row.get("tool_calls") or []:
            if isinstance(call, dict):
                self._text(f"{key}#{call.get('id', '')}", str(call.get("stream") or ""), str(call.get("args") or ""),
                           changed)

    def _text(self, key: str, stream: str, base: str, changed: list[tuple[str, str, int]]) -> None:
        if not stream:
            old = self.texts.get(key, "")
            if base != old:
                self.texts[key] = base
                changed.append((key, base, len(old) if base.startswith(old) else 0))
            return
        entry = self.entries.setdefault(stream, _Entry())
        old = entry.text
        if base.startswith(old) if len(base) > len(old) else not old.startswith(base):  # as seed() in the jsx
            entry.text, entry.gap = base, False
        if not entry.seeded:
            entry.seeded = True
            for offset, text, done in entry.queued:
                self._append(stream, entry, offset, text, done)
            entry.queued = []
        if entry.text != old:
            changed.append((stream, entry.text, len(old) if entry.text.startswith(old) else 0))

    def _append(self, key: str, entry: _Entry, offset: int, text: str, done: bool) -> None:
        self.stream_chunks += 1
        if offset > len(entry.text):
            entry.gap = True
            self.stream_gaps += 1
            self.gap_keys.add(key)
            return
        if offset + len(text) > len(entry.text):
            entry.text = entry.text[:offset] + text
        entry.done = entry.done or done

    def _script(self, payload: dict[str, Any], changed: list[tuple[str, str, int]]) -> None:
        code = str(payload.get("javascript_code") or "")
        name = code.find("icStream")  # icStream(<JSON>), window.icStream?.(<JSON>), …: the JSON list is the argument
        start = code.find("[", name)
        if name < 0 or start < 0:
            return
        try:
            chunks = json.loads(code[start: code.rindex("]") + 1])
        except ValueError:
            self.script_errors += 1
            return
        for chunk in chunks if isinstance(chunks, list) else []:
            if not (isinstance(chunk, list) and len(chunk) >= 3 and isinstance(chunk[1], int)):
                self.script_errors += 1
                continue
            key, offset, text, done = str(chunk[0]), chunk[1], str(chunk[2]), bool(chunk[3:4] and chunk[3])
            entry = self.entries.setdefault(key, _Entry())
            if not entry.seeded:
                entry.queued.append((offset, text, done))
                continue
            old = entry.text
            self._append(key, entry, offset, text, done)
            if entry.text != old:
                changed.append((key, entry.text, min(offset, len(old))))


def foreign_nonces(raw: str, own: set[str]) -> set[str]:
    """Nonces (``Z`` + 16 hex) in a raw frame that are not this tab's: a cross-session leak when non-empty."""
    if raw.count("Z") == sum(raw.count(n) for n in own):  # fast path: every "Z" starts one of ours
        return set()
    return set(NONCE_RE.findall(raw)) - own
