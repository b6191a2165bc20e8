"""A paced, LLM-free AG-UI agent that streams one long markdown answer (its own process, 127.0.0.1).

Every run answers with the same markdown document (headings, paragraphs, lists, inline code, a quote, a table;
no fenced code, so neither chat spends its time on syntax highlighting),
cut into ``--deltas`` ``TEXT_MESSAGE_CONTENT`` deltas of 4 characters, like LLM tokens. The user's
message sets the pace: ``rate:<deltas per second>`` (``rate:0``: unpaced, as fast as the socket
takes them), on an absolute schedule, and ``deltas:<N>`` overrides ``--deltas`` for that answer
(``long_thread.py``'s heap phase: many short turns). The first delta is ``BEGIN_MARK`` and the last one
``END_MARK``, so a page can tell when each is drawn. ``GET /sent`` returns, for the last
run, the wall-clock time (``time.time()``) just before the first and the last delta were written.

Two more messages build a long thread (``long_thread.py``): ``backlog:<N>`` answers with a
``MESSAGES_SNAPSHOT`` of the thread plus N turns of the demo agent's backlog (markdown, code
blocks, a tool call every tenth turn), and ``ask`` ends its run with a ``delete_files`` approval
(an AG-UI 1.0 interrupt outcome), so the thread ends with a pending request.

    python -m benchmarks._markdown_agent --deltas 4000    # prints "PORT <n>" once listening
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
import uuid
from typing import Any

from ag_ui.core import (
    BaseEvent,
    MessagesSnapshotEvent,
    RunAgentInput,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder

from benchmarks._asgi import read_body, send_json, serve

RATE = re.compile(r"rate:(\d+(?:\.\d+)?)")
BACKLOG = re.compile(r"backlog:(\d+)")
DELTAS = re.compile(r"deltas:(\d+)")
_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
DELTA_CHARS = 4
BEGIN_MARK, END_MARK = "Zq7x", "Qz9w"  # one delta each, found nowhere else in the answer

_SECTION = """## Section {n}: what the agent found

The request touches **{n} services** and a handful of `config` files. Here is the plan, step by
step, with the reasoning behind each change so that a reviewer can follow it without the logs.

- Read the current settings and keep a copy of them
- Change the timeout from `30s` to `45s` where the *slow* path needs it
- Run the checks again and compare the numbers with the last run

> Note: the retry helper tries `{n}` times, then gives up with a `TimeoutError`; the
> logs keep every attempt, so a reviewer can see why it stopped.

| step | owner | minutes |
|------|-------|---------|
| read | agent | {n} |
| test | ci    | 12 |

"""


def answer_text(deltas: int) -> str:
    """The answer: ``deltas`` × 4 characters of markdown, framed by the markers."""
    size = deltas * DELTA_CHARS
    head, tail = BEGIN_MARK, END_MARK
    body, n = "\n\n", 1
    while len(body) < size:
        body += _SECTION.format(n=n)
        n += 1
    body = head + body[:size - len(head) - len(tail)] + tail
    return body


class MarkdownAgent:
    """Raw ASGI app: no framework between the event loop and the socket (keeps the agent's CPU small)."""

    def __init__(self, deltas: int) -> None:
        self.deltas = deltas
        self.encoder = EventEncoder()
        self.last: dict[str, Any] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                while (await receive())["type"] != "lifespan.shutdown":
                    pass
            return
        if scope["method"] == "GET":
            await send_json(send, json.dumps(self.last).encode())
            return
        await self._run(RunAgentInput.model_validate_json(await read_body(receive)), send)

    async def _run(self, body: RunAgentInput, send: Any) -> None:
        users = [m for m in body.messages if m.role == "user"]
        said = str(users[-1].content) if users else ""
        if BACKLOG.search(said) or said == "ask":
            await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
            frames = "".join(self.encoder.encode(event) for event in _thread_events(body, said))
            await send({"type": "http.response.body", "body": frames.encode(), "more_body": False})
            return
        found = RATE.search(said) if users else None
        rate = float(found.group(1)) if found else 0.0
        count = DELTAS.search(said)
        deltas = max(2, int(count.group(1))) if count else self.deltas  # the two markers at least
        run = uuid.uuid4().hex[:8]
        text = answer_text(deltas)
        self.last = {"run": run, "chars": len(text), "bytes": len(text.encode()), "rate": rate}
        encode, message_id = self.encoder.encode, f"msg-{run}"
        loop = asyncio.get_running_loop()
        await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
        head = encode(RunStartedEvent(thread_id=body.thread_id, run_id=body.run_id))
        head += encode(TextMessageStartEvent(message_id=message_id, role="assistant"))
        await send({"type": "http.response.body", "body": head.encode(), "more_body": True})
        start = loop.time()
        for seq in range(deltas):
            if rate:
                delay = start + seq / rate - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
            frame = encode(TextMessageContentEvent(message_id=message_id,
                                                   delta=text[seq * DELTA_CHARS:(seq + 1) * DELTA_CHARS]))
            now = time.time()
            self.last.setdefault("first_sent", now)
            self.last["last_sent"] = now
            await send({"type": "http.response.body", "body": frame.encode(), "more_body": True})
            if not rate and seq % 64 == 63:
                await asyncio.sleep(0)  # unpaced, but let the server flush
        tail = encode(TextMessageEndEvent(message_id=message_id))
        tail += encode(RunFinishedEvent(thread_id=body.thread_id, run_id=body.run_id))
        await send({"type": "http.response.body", "body": tail.encode(), "more_body": False})


def _thread_events(body: RunAgentInput, said: str) -> list[BaseEvent]:
    """A run of ``backlog:<N>`` (the thread plus N backlog turns) or of ``ask`` (a pending approval)."""
    from interrupt_chat.demo.agent import interrupts
    from interrupt_chat.demo.agent.backlog import turn_messages

    run, message_id = uuid.uuid4().hex[:8], f"msg-{uuid.uuid4().hex[:8]}"
    events: list[BaseEvent] = [RunStartedEvent(thread_id=body.thread_id, run_id=body.run_id)]
    found = BACKLOG.search(said)
    if found:
        turns = [m for i in range(int(found.group(1))) for m in turn_messages(i)]
        events.append(MessagesSnapshotEvent(messages=[*body.messages, *turns]))
    text = "That is the backlog." if found else "One more step needs your approval."
    events += [TextMessageStartEvent(message_id=message_id, role="assistant"),
               TextMessageContentEvent(message_id=message_id, delta=text), TextMessageEndEvent(message_id=message_id)]
    if found:
        return [*events, RunFinishedEvent(thread_id=body.thread_id, run_id=body.run_id)]
    call = f"call-{run}"
    pending = interrupts.approval(call, "delete_files", interrupts.DELETE_ARGS)
    events += [ToolCallStartEvent(tool_call_id=call, tool_call_name="delete_files", parent_message_id=message_id),
               ToolCallArgsEvent(tool_call_id=call, delta=json.dumps(interrupts.DELETE_ARGS)),
               ToolCallEndEvent(tool_call_id=call)]
    outcome = RunFinishedInterruptOutcome(interrupts=[pending.interrupt])
    return [*events, RunFinishedEvent(thread_id=body.thread_id, run_id=body.run_id, outcome=outcome)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=4000)
    args = parser.parse_args(argv)
    serve(MarkdownAgent(args.deltas), loop="asyncio")  # the same agent whatever the machine has installed


if __name__ == "__main__":
    main()
