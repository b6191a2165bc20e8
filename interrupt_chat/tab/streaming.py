"""New bytes only: a streaming text goes to the page as appended chunks, never resent whole.

While a text streams (an answer, reasoning, a tool call's arguments), its row var keeps the
prefix the page had when the text was first pushed: the text is *frozen* in the var, and
``ChatState._frozen`` records how many characters the var holds, by stream key. What comes
after goes as chunks through Reflex's own event channel (a ``_call_script`` event running
``icStream``, see ``components/stream_text.jsx``), so each push carries only the new text.
A finished answer stays frozen: the page already has it, and sending it again in the var would
double the bytes. A page that lacks a text (a reload, a reconnect that missed chunks) asks for it
(``ChatState.resync_stream``); the var then carries the whole text again.

Framework-free apart from :func:`emit`: the bookkeeping works on the transcript and a mapping.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field

from ..agui import MessageView, ToolCallView, Transcript
from ..model.stream_keys import args_key, text_key

__all__ = ["Chunk", "Outbox", "args_key", "script", "text_key"]

Chunk = tuple[str, int, str, bool]  # key, offset, text, done
STREAMED_ROLES = ("assistant", "reasoning")


def script(chunks: list[Chunk]) -> str:
    """The JavaScript that hands ``chunks`` to the page (a JSON literal: agent text is data, never code)."""
    wire = [[key, offset, text, 1] if done else [key, offset, text] for key, offset, text, done in chunks]
    return "window.icStream?.(" + json.dumps(wire, ensure_ascii=False, separators=(",", ":")) + ")"


@dataclass
class _Target:
    key: str
    text: str
    streaming: bool
    is_args: bool


@dataclass
class Outbox:
    """One run's chunks: what each streaming text has sent so far, in the var or as chunks."""

    thread_id: str
    sent: dict[str, str] = field(default_factory=dict)  # key -> the text the page has (a prefix of the current)
    done: set[str] = field(default_factory=set)

    def prepare(self, frozen: MutableMapping[str, int], transcript: Transcript, resync: bool) -> list[Chunk]:
        """Freeze new streaming texts and return the chunks owed (inside the lock, before ``publish``).

        ``frozen`` is the chat's ``_frozen`` (changed in place; the caller reassigns it). With
        ``resync`` the page lost its texts: every streaming text is frozen again at its current
        length (the var carries it whole) and finished ones are unfrozen.
        """
        chunks: list[Chunk] = []
        seen = set()
        for target in self._targets(transcript, frozen):
            key, text = target.key, target.text
            seen.add(key)
            have = self.sent.get(key, "")
            fresh = key not in frozen or resync or key not in self.sent or not text.startswith(have)
            if not target.streaming and (target.is_args or fresh):
                # finished: arguments are drawn as formatted JSON, and a text the page cannot continue
                # goes whole; either way the var carries it
                frozen.pop(key, None)
                self.sent.pop(key, None)
            elif fresh:
                frozen[key], self.sent[key] = len(text), text  # the var carries the text so far
                self.done.discard(key)
            elif len(text) > len(have) or (not target.streaming and key not in self.done):
                chunks.append((key, len(have), text[len(have):], not target.streaming))
                self.sent[key] = text
                if not target.streaming:
                    self.done.add(key)
        for key in [key for key in frozen if key not in seen]:  # an earlier turn's (its rows are whole now)
            del frozen[key]
            self.sent.pop(key, None)
        return chunks

    def grown(self, transcript: Transcript) -> list[Chunk] | None:
        """The chunks owed when only already-frozen texts grew: no var changes, so no lock is needed.

        None when the var must change (a new or finished text, a replaced one): push with the lock.
        """
        grown = [(target.key, target.text) for target in self._targets(transcript, {})]  # the streaming ones
        if any(key not in self.sent or not text.startswith(self.sent[key]) for key, text in grown):
            return None
        chunks: list[Chunk] = []
        for key, text in grown:
            have = self.sent[key]
            if len(text) > len(have):
                chunks.append((key, len(have), text[len(have):], False))
                self.sent[key] = text
        return chunks

    def _targets(self, transcript: Transcript, frozen: MutableMapping[str, int]) -> Iterator[_Target]:
        for message in transcript.messages[transcript.tail_start:]:
            if message.role in STREAMED_ROLES:
                key = text_key(self.thread_id, message.id)
                if message.streaming or key in frozen:
                    yield _Target(key, message.content, message.streaming, False)
            yield from self._call_targets(transcript, message, frozen)

    def _call_targets(self, transcript: Transcript, message: MessageView,
                      frozen: MutableMapping[str, int]) -> Iterator[_Target]:
        for call_id in message.tool_call_ids:
            call: ToolCallView | None = transcript.tool_calls.get(call_id)
            if call is None:
                continue
            key = args_key(self.thread_id, call.id)
            streaming = call.status == "streaming"
            if streaming or key in frozen:
                yield _Target(key, call.args_text, streaming, True)
