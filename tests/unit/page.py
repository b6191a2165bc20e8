"""What a browser tab receives from a chat state's background events, for in-process tests.

Handlers run inside a Reflex ``EventContext`` whose ``emit_event`` lands here: the
``_call_script`` events that carry streamed text (``interrupt_chat.tab.streaming``) are applied the
way ``components/stream_text.jsx`` applies them, so a test reads the text a page shows.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from reflex.istate.manager.memory import StateManagerMemory
from reflex_base.event import Event
from reflex_base.event.context import EventContext

from interrupt_chat.model.history import HistoryStore, apply

PREFIX, SUFFIX = "window.icStream?.(", ")"


@dataclass
class _Entry:
    text: str = ""
    seeded: bool = False
    done: bool = False
    gap: bool = False
    queued: list[tuple[int, str, bool]] = field(default_factory=list)

    def append(self, offset: int, text: str, done: bool) -> None:
        if offset > len(self.text):
            self.gap = True
            return
        if offset + len(text) > len(self.text):
            self.text = self.text[:offset] + text
        self.done = self.done or done

    def seed(self, base: str) -> None:
        if base.startswith(self.text) if len(base) > len(self.text) else not self.text.startswith(base):
            self.text, self.gap = base, False
        if not self.seeded:
            self.seeded = True
            for chunk in self.queued:
                self.append(*chunk)
            self.queued.clear()


@dataclass
class Page:
    """The streamed texts a tab holds, and every script event it received."""

    entries: dict[str, _Entry] = field(default_factory=dict)
    scripts: list[str] = field(default_factory=list)
    stores: dict[int, HistoryStore[Any]] = field(default_factory=dict)  # chat state (by identity) -> its history

    async def emit(self, token: str, *events: Event) -> None:
        for event in events:
            assert event.name == "_call_script", event
            code = event.payload["javascript_code"]
            assert code.startswith(PREFIX) and code.endswith(SUFFIX), code
            self.scripts.append(code)
            for key, offset, text, *done in json.loads(code[len(PREFIX):-len(SUFFIX)]):
                entry = self.entries.setdefault(key, _Entry())
                if entry.seeded:
                    entry.append(offset, text, bool(done))
                else:
                    entry.queued.append((offset, text, bool(done)))

    def text(self, stream: str, base: str) -> str:
        """What the page shows for a row's text: its var's prefix met with the streamed chunks."""
        if not stream:
            return base
        entry = self.entries.setdefault(stream, _Entry())
        entry.seed(base)
        return entry.text

    def history(self, chat: Any) -> list[Any]:
        """The history rows the page holds for a chat state, after its ``history`` var (as ``history_rows.js``).

        A test that does not send the state between events sees each delta made against nothing
        sent: a reset of the newest page, which a fresh page applies too.
        """
        store = self.stores.get(id(chat), HistoryStore())
        after = apply(store, chat.history)
        assert after is not None, "the page missed a history delta"
        self.stores[id(chat)] = after
        return after.rows

    def show(self, row: Any) -> Any:
        """A copy of a ``MessageRow`` with the texts the page shows (its own and its tool calls' arguments)."""
        calls = [dataclasses.replace(call, args=self.text(call.stream, call.args)) for call in row.tool_calls]
        return dataclasses.replace(row, content=self.text(row.stream, row.content), tool_calls=calls)

    @contextlib.contextmanager
    def attached(self) -> Iterator[Page]:
        """Run the code inside as an event of this tab (its background events reach :meth:`emit`)."""

        async def enqueue(*_: Any) -> None:
            return None

        context = EventContext(token="page-token", state_manager=StateManagerMemory(), enqueue_impl=enqueue,
                               emit_event_impl=self.emit)
        token = EventContext.set(context)
        try:
            yield self
        finally:
            EventContext.reset(token)
