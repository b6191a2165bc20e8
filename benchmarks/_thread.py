"""The synthetic thread every benchmark uses: runs of user message, streamed answer, tool call, result.

One run, as wire dicts (camelCase, as an agent sends them)::

    RUN_STARTED
    TEXT_MESSAGE_START, TEXT_MESSAGE_CONTENT x deltas, TEXT_MESSAGE_END   (the assistant answer)
    TOOL_CALL_START (parent: the answer), TOOL_CALL_ARGS x arg_deltas, TOOL_CALL_END
    TOOL_CALL_RESULT
    RUN_FINISHED

The user message is not an event: the client adds it (``Transcript.add_user_message``) before the
run, as ``AgentSession.send`` does. Everything is deterministic (no randomness, no clock).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `python benchmarks/x.py` puts benchmarks/ first, not the repo
    sys.path.insert(0, str(ROOT))

THREAD_ID = "thread-bench"
RUNS = 200
DELTAS = 200  # text deltas per answer (~5 characters each, like LLM tokens)
ARG_DELTAS = 12  # tool-call argument deltas per run

_WORDS = ("the ", "agent ", "streams ", "a ", "token ", "at ", "time; ", "each ", "one ", "is ", "short ",
          "and ", "ends ", "with ", "space ", "so ", "text ", "grows. ")


def user_text(i: int) -> str:
    return f"Question number {i}: please look up the order status and summarise it for me."


def ids(i: int) -> dict[str, str]:
    return {"run": f"run-{i:04d}", "user": f"r{i:04d}-user", "answer": f"r{i:04d}-answer",
            "call": f"r{i:04d}-call", "result": f"r{i:04d}-result"}


def tool_args(i: int) -> str:
    return json.dumps({"order_id": f"ORD-{i:06d}", "fields": ["status", "eta", "items", "carrier"],
                       "include_history": True, "locale": "en-GB", "note": "look it up " * 6})


def tool_result(i: int) -> str:
    return json.dumps({"order_id": f"ORD-{i:06d}", "status": "shipped", "eta": "2026-01-1" + str(i % 10),
                       "carrier": "ACME", "items": [{"sku": f"SKU-{i}-{k}", "qty": k + 1} for k in range(4)]})


def split(text: str, pieces: int) -> list[str]:
    size = max(1, -(-len(text) // pieces))
    return [text[k:k + size] for k in range(0, len(text), size)]


def run_events(i: int, *, deltas: int = DELTAS, arg_deltas: int = ARG_DELTAS,
               thread_id: str = THREAD_ID, run_id: str | None = None) -> list[dict[str, Any]]:
    """The wire events of run ``i`` (the user message excluded, see the module doc)."""
    n = ids(i)
    run_id = run_id or n["run"]
    out: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id},
                                 {"type": "TEXT_MESSAGE_START", "messageId": n["answer"], "role": "assistant"}]
    out += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": n["answer"], "delta": _WORDS[(i + k) % len(_WORDS)]}
            for k in range(deltas)]
    out.append({"type": "TEXT_MESSAGE_END", "messageId": n["answer"]})
    out.append({"type": "TOOL_CALL_START", "toolCallId": n["call"], "toolCallName": "lookup_order",
                "parentMessageId": n["answer"]})
    out += [{"type": "TOOL_CALL_ARGS", "toolCallId": n["call"], "delta": piece}
            for piece in split(tool_args(i), arg_deltas)]
    out.append({"type": "TOOL_CALL_END", "toolCallId": n["call"]})
    out.append({"type": "TOOL_CALL_RESULT", "messageId": n["result"], "toolCallId": n["call"],
                "content": tool_result(i), "role": "tool"})
    out.append({"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id})
    return out


def typed_runs(runs: int = RUNS, **kwargs: Any) -> list[list[Any]]:
    """``run_events`` for runs 0..runs-1, validated into ``ag_ui.core`` events (done once, untimed)."""
    from interrupt_chat.agui import parse_event

    return [[parse_event(d) for d in run_events(i, **kwargs)] for i in range(runs)]


def build_transcript(runs: list[list[Any]], transcript: Any = None) -> Any:
    """Fold ``runs`` into a transcript (a fresh one by default), user messages included."""
    from interrupt_chat.agui import Transcript

    transcript = transcript if transcript is not None else Transcript()
    for i, events in enumerate(runs):
        transcript.add_user_message(ids(i)["user"], user_text(i))
        for event in events:
            transcript.apply(event)
    return transcript


def best_of(fn, repeats: int) -> float:
    """The fastest of ``repeats`` calls of ``fn()``, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def us(seconds: float) -> str:
    return f"{seconds * 1e6:8.2f} us"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.2f} ms"
