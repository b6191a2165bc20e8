"""``backlog N``: a long thread in one run, for long-thread tests and benchmarks (issue 27).

The agent answers with a ``MESSAGES_SNAPSHOT`` of the thread so far followed by ``N`` turns (a
question, then an answer in markdown with a code block; every tenth answer calls a tool and reads
its result). A thread of ``backlog 500`` holds over 1,000 messages; a request at its end is one
more turn (``approval``). Turn ``i``'s question says ``topic-i?`` (search tests).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from ag_ui.core import AssistantMessage, BaseEvent, FunctionCall, Message, ToolCall, ToolMessage, UserMessage

from .context import RunContext

__all__ = ["MAX_TURNS", "backlog", "turn_messages"]

MAX_TURNS = 1000
DEFAULT_TURNS = 500


def turn_messages(i: int) -> list[Message]:
    """Backlog turn ``i``: a question and its answer (every tenth with a tool call and its result)."""
    answer = (f"## Step {i}\n\nHere is how to do **part {i}** of the job:\n\n"
              f"1. read the input\n2. transform it\n3. write it back\n\n"
              f"```python\ndef step_{i}(data: list[int]) -> list[int]:\n    return [x * {i} for x in data]\n```\n")
    messages: list[Message] = [UserMessage(id=f"backlog-u{i}", role="user", content=f"How do I do topic-{i}?")]
    if i % 10 == 0:
        call = ToolCall(id=f"backlog-c{i}", type="function",
                        function=FunctionCall(name="lookup", arguments=json.dumps({"topic": i})))
        messages += [AssistantMessage(id=f"backlog-t{i}", role="assistant", tool_calls=[call]),
                     ToolMessage(id=f"backlog-r{i}", role="tool", tool_call_id=call.id, content=f"notes on {i}")]
    messages.append(AssistantMessage(id=f"backlog-a{i}", role="assistant", content=answer))
    return messages


def backlog(ctx: RunContext) -> Iterator[BaseEvent]:
    """The thread so far, then ``N`` turns (``backlog 300``; default 500)."""
    words = " ".join(m.content for m in ctx.body.messages[-1:] if isinstance(m, UserMessage)
                     and isinstance(m.content, str)).split()
    turns = int(words[1]) if len(words) > 1 and words[1].isdigit() else DEFAULT_TURNS
    earlier = [message for i in range(min(turns, MAX_TURNS)) for message in turn_messages(i)]
    yield ctx.ev.messages_snapshot([*ctx.body.messages, *earlier])
    yield from ctx.ev.text_message(f"That is the whole backlog: {min(turns, MAX_TURNS)} turns.")
    yield ctx.ev.run_finished()
