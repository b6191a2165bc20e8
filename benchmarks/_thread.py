"""The synthetic thread every benchmark uses: runs of user message, streamed answer, tool call, result.

One run, as wire dicts (camelCase, as an agent sends them)::

    RUN_STARTED
    TEXT_MESSAGE_START, TEXT_MESSAGE_CONTENT x deltas, TEXT_MESSAGE_END   (the assistant answer)
    TOOL_CALL_START (parent: the answer), TOOL_CALL_ARGS x arg_deltas, TOOL_CALL_END
    TOOL_CALL_RESULT
    RUN_FINISHED

The user message is not an event: the client adds it before the run, as ``AgentSession.send``
does: ``Transcript.mark_tail()`` (the run's messages start here) then ``add_user_message``
(:func:`start_run`). ``interrupted_run_events`` / ``resume_run_events`` give a human-in-the-loop
pair: a run that ends with an interrupt on its tool call, and the resume run (``AgentSession.submit``)
that delivers that call's result. Everything is deterministic (no randomness, no clock).
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


def interrupt_id(i: int) -> str:
    return f"r{i:04d}-approval"


def interrupted_run_events(i: int, *, deltas: int = DELTAS, arg_deltas: int = ARG_DELTAS,
                           thread_id: str = THREAD_ID) -> list[dict[str, Any]]:
    """Run ``i`` without a result: it ends with ``RUN_FINISHED.outcome = interrupt`` on its tool call."""
    out = [e for e in run_events(i, deltas=deltas, arg_deltas=arg_deltas, thread_id=thread_id)
           if e["type"] != "TOOL_CALL_RESULT"]
    out[-1] = {**out[-1], "outcome": {"type": "interrupt", "interrupts": [
        {"id": interrupt_id(i), "reason": "tool_call", "toolCallId": ids(i)["call"],
         "message": "Approve the order lookup?"}]}}
    return out


def resume_run_events(i: int, *, deltas: int = DELTAS, thread_id: str = THREAD_ID) -> list[dict[str, Any]]:
    """The resume run after ``interrupted_run_events(i)``: the approved call's result (it belongs to
    the interrupted run's assistant message), then a new answer streamed in ``deltas`` deltas."""
    n = ids(i)
    answer = f"r{i:04d}-after"
    out: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": thread_id, "runId": f"run-{i:04d}-resume"},
                                 {"type": "TOOL_CALL_RESULT", "messageId": n["result"], "toolCallId": n["call"],
                                  "content": tool_result(i), "role": "tool"},
                                 {"type": "TEXT_MESSAGE_START", "messageId": answer, "role": "assistant"}]
    out += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": answer, "delta": _WORDS[(i + k) % len(_WORDS)]}
            for k in range(deltas)]
    out += [{"type": "TEXT_MESSAGE_END", "messageId": answer},
            {"type": "RUN_FINISHED", "threadId": thread_id, "runId": f"run-{i:04d}-resume"}]
    return out


def typed_runs(runs: int = RUNS, **kwargs: Any) -> list[list[Any]]:
    """``run_events`` for runs 0..runs-1, validated into ``ag_ui.core`` events (done once, untimed)."""
    from interrupt_chat.agui import parse_event

    return [[parse_event(d) for d in run_events(i, **kwargs)] for i in range(runs)]


def start_run(transcript: Any, i: int) -> None:
    """What ``AgentSession.send`` does to the transcript before run ``i``: mark where the run's
    messages start (``mark_tail``), then add the user message."""
    transcript.mark_tail()
    transcript.add_user_message(ids(i)["user"], user_text(i))


def build_transcript(runs: list[list[Any]], transcript: Any = None) -> Any:
    """Fold ``runs`` into a transcript (a fresh one by default), each started as ``send`` does."""
    from interrupt_chat.agui import Transcript

    transcript = transcript if transcript is not None else Transcript()
    for i, events in enumerate(runs):
        start_run(transcript, i)
        for event in events:
            transcript.apply(event)
    return transcript


class MemoryRun:
    """An ``AgentRun`` stand-in that yields pre-parsed events (no network, no sleeps)."""

    def __init__(self, events: list[Any]) -> None:
        self._events = events
        self.cancelled = False  # AgentRun's flag: the session checks it between the events of a batch

    async def _iterate(self):
        for event in self._events:
            yield event

    def __aiter__(self):
        return self._iterate()

    async def batches(self):
        """One event per batch: each event costs the whole pipeline, as a paced agent's do."""
        async for event in self._iterate():
            yield [event]

    def cancel(self) -> None:
        self.cancelled = True

    async def aclose(self) -> None:
        pass


class MemoryClient:
    """An ``AgentClient`` stand-in (set it as ``session.client``): each ``run()`` replays the next
    of ``runs`` (any iterable of event lists; ``itertools.repeat(events)`` replays one run)."""

    url = "memory://bench"  # the chat refuses to send without a configured agent URL

    def __init__(self, runs: Any) -> None:
        self._runs = iter(runs)

    def run(self, run_input: Any, **_: Any) -> MemoryRun:
        return MemoryRun(next(self._runs))


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
