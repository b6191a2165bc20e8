"""Record raw AG-UI event streams from the LLM-free example producers into ``tests/fixtures/streams/``.

Usage::

    .venv/bin/python scripts/record_streams.py [--out tests/fixtures/streams] [--only langgraph_std_]

Every flow runs in-process (``httpx.ASGITransport``) against a fresh app, on its own thread: an initial run and
then resume runs (or follow-up user turns). For run ``n`` (from 1) of flow ``<producer>_<mode>_<flow>`` it writes

- ``<producer>_<mode>_<flow>_<n>.request.json``: the POSTed ``RunAgentInput``;
- ``<producer>_<mode>_<flow>_<n>.jsonl``: the SSE ``data:`` JSON of every event, one object per line, as produced;

plus ``index.json`` (flows, routes, what each run sends, producer versions). Thread, run and user-message ids are
deterministic; producer-made ids (LangGraph interrupt ids, message ids) are random, as the producers make them.

The transcript carried into the next request is rebuilt here from ``TEXT_MESSAGE_*``, ``TOOL_CALL_*``,
``TOOL_CALL_RESULT`` and ``MESSAGES_SNAPSHOT`` by a deliberately small helper (``Transcript``), not by the
project's client core.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
from ag_ui.core import RunAgentInput
from httpx_sse import aconnect_sse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for `examples`

DEFAULT_OUT = ROOT / "tests" / "fixtures" / "streams"


# --- the transcript carried from run to run -------------------------------------------------------------------


@dataclass
class Transcript:
    """Wire-shaped (camelCase dict) messages, updated from a run's events."""

    messages: list[dict] = field(default_factory=list)

    def _find(self, message_id: str | None) -> dict | None:
        return next((m for m in self.messages if message_id and m.get("id") == message_id), None)

    def _assistant(self, message_id: str) -> dict:
        msg = self._find(message_id)
        if msg is None:
            msg = {"id": message_id, "role": "assistant"}
            self.messages.append(msg)
        return msg

    def apply(self, event: dict) -> None:
        kind = event["type"]
        if kind == "MESSAGES_SNAPSHOT":
            self.messages = [dict(m) for m in event["messages"]]
        elif kind == "TEXT_MESSAGE_START":
            self._assistant(event["messageId"])
        elif kind == "TEXT_MESSAGE_CONTENT":
            msg = self._assistant(event["messageId"])
            msg["content"] = (msg.get("content") or "") + event["delta"]
        elif kind == "TOOL_CALL_START":
            msg = self._assistant(event.get("parentMessageId") or f"msg-{event['toolCallId']}")
            calls = msg.setdefault("toolCalls", [])
            if not any(c["id"] == event["toolCallId"] for c in calls):  # idempotent on replay
                calls.append({"id": event["toolCallId"], "type": "function",
                              "function": {"name": event["toolCallName"], "arguments": ""}})
        elif kind == "TOOL_CALL_ARGS":
            for msg in self.messages:
                for call in msg.get("toolCalls") or []:
                    if call["id"] == event["toolCallId"]:
                        call["function"]["arguments"] += event["delta"]
        elif kind == "TOOL_CALL_RESULT" and not self._find(event["messageId"]):
            self.messages.append({"id": event["messageId"], "role": "tool",
                                  "toolCallId": event["toolCallId"], "content": event["content"]})


def pending_interrupts(events: list[dict]) -> list[dict]:
    """Interrupts of the run's RUN_FINISHED outcome (standard channel), else []."""
    for ev in events:
        if ev["type"] == "RUN_FINISHED":
            outcome = ev.get("outcome") or {}
            return list(outcome.get("interrupts") or []) if outcome.get("type") == "interrupt" else []
    return []


# --- flows ----------------------------------------------------------------------------------------------------

# A step is ("user", text), ("resume", answers) with one answer per pending interrupt in order (a payload dict, or
# CANCEL), or ("legacy", payload) for forwardedProps.command.resume.
CANCEL = "cancelled"
Step = tuple[str, Any]


@dataclass
class Flow:
    producer: str
    mode: str
    name: str
    path: str
    steps: list[Step]
    description: str

    @property
    def key(self) -> str:
        return f"{self.producer}_{self.mode}_{self.name}"


APPROVE, REJECT = {"approved": True}, {"approved": False}
ADA = {"name": "Ada", "count": 3}


def langgraph_flows() -> list[Flow]:
    flows = []
    for mode in ("std", "legacy"):
        def f(name, flow, steps, description, mode=mode):
            flows.append(Flow("langgraph", mode, name, f"/{mode}/{flow}", steps, description))

        if mode == "std":
            f("approval-approve", "approval", [("user", "delete my files"), ("resume", [APPROVE])],
              "confirmation interrupt, resume[] approved -> 'approved: True'")
            f("approval-reject", "approval", [("user", "delete my files"), ("resume", [REJECT])],
              "confirmation interrupt, resume[] approved=false -> 'approved: False'")
            f("approval-cancel", "approval", [("user", "delete my files"), ("resume", [CANCEL])],
              "confirmation interrupt, resume[] status cancelled -> 'cancelled'")
            f("form-submit", "form", [("user", "order please"), ("resume", [ADA])],
              "input_required interrupt with a form schema -> 'name=Ada count=3'")
            f("form-cancel", "form", [("user", "order please"), ("resume", [CANCEL])],
              "input_required interrupt, cancelled -> 'cancelled'")
            f("multi-mixed", "multi", [("user", "send the reports"), ("resume", [APPROVE, CANCEL])],
              "two parallel interrupts, one approved and one cancelled in one resume")
            f("multi-partial", "multi",
              [("user", "send the reports"), ("resume", [APPROVE, None]), ("resume", [REJECT])],
              "two interrupts, resume covers only the first (not spec-conforming for a client): the run ends with"
              " the second interrupt again; then it is answered")
            f("approval-newmessage", "approval", [("user", "delete my files"), ("user", "what was that?")],
              "a plain new user message on an interrupted thread: the same interrupt is raised again")
        else:
            f("approval-approve", "approval", [("user", "delete my files"), ("legacy", APPROVE)],
              "CUSTOM on_interrupt only; resumed via forwardedProps.command.resume -> 'approved: True'")
            f("approval-reject", "approval", [("user", "delete my files"), ("legacy", REJECT)],
              "legacy resume with approved=false -> 'approved: False'")
            f("form-submit", "form", [("user", "order please"), ("legacy", ADA)],
              "legacy input_required form -> 'name=Ada count=3'")
            f("multi-legacyresume", "multi", [("user", "send the reports"), ("legacy", APPROVE)],
              "two interrupts; a single legacy resume value cannot address them: RUN_ERROR from langgraph")
            f("approval-newmessage", "approval", [("user", "delete my files"), ("user", "what was that?")],
              "a plain new user message on an interrupted thread: the same interrupt is raised again")
    return flows


def pydantic_ai_flows() -> list[Flow]:
    def f(name, steps, description):
        return Flow("pydanticai", "std", name, "/", steps, description)

    return [
        f("hello", [("user", "hello there")], "plain text answer, no interrupt"),
        f("approve", [("user", "delete my files"), ("resume", [APPROVE]), ("user", "hello again")],
          "tool_call interrupt, approved -> TOOL_CALL_RESULT + 'Tool said: deleted 3 files in /tmp/demo'; then a"
          " plain follow-up turn carrying the whole history"),
        f("deny", [("user", "delete my files"), ("resume", [REJECT])],
          "approved=false -> 'Tool said: The tool call was denied.'"),
        f("edit", [("user", "delete my files"),
                   ("resume", [{"approved": True, "editedArgs": {"path": "/tmp/other", "count": 1}}])],
          "editedArgs replace the arguments -> 'Tool said: deleted 1 files in /tmp/other'"),
        f("cancel", [("user", "delete my files"), ("resume", [CANCEL])],
          "status cancelled -> 'Tool said: Cancelled by user.'"),
        f("multi-mixed", [("user", "multi please"), ("resume", [APPROVE, CANCEL])],
          "two tool calls in one response, two interrupts; one approved, one cancelled"),
        f("multi-partial", [("user", "multi please"), ("resume", [APPROVE, None])],
          "resume covers only the first interrupt (not spec-conforming for a client): pydantic-ai strips the"
          " unanswered call with a warning and finishes with success"),
        f("badpayload", [("user", "delete my files"), ("resume", [{"approved": "yes"}])],
          "payload not matching responseSchema -> RUN_ERROR"),
    ]


# --- running --------------------------------------------------------------------------------------------------


def build_body(flow: Flow, n: int, transcript: Transcript, step: Step, pending: list[dict]) -> dict:
    kind, arg = step
    resume, forwarded = None, {}
    if kind == "user":
        transcript.messages.append({"id": f"u{n}", "role": "user", "content": arg})
    elif kind == "legacy":
        forwarded = {"command": {"resume": arg}}
    elif kind == "resume":
        if not pending:
            raise RuntimeError(f"{flow.key} run {n}: resume step but no pending interrupts")
        resume = []
        for interrupt, answer in zip(pending, arg, strict=False):
            if answer is None:
                continue  # deliberately uncovered
            if answer == CANCEL:
                resume.append({"interruptId": interrupt["id"], "status": "cancelled"})
            else:
                resume.append({"interruptId": interrupt["id"], "status": "resolved", "payload": answer})
    thread = flow.key.replace("_", "-")
    return RunAgentInput(
        thread_id=thread, run_id=f"{thread}-run{n}", protocol_version="1.0",
        state={}, tools=[], context=[], forwarded_props=forwarded,
        messages=transcript.messages, resume=resume,
    ).model_dump(by_alias=True, exclude_none=True)


async def post_run(client: httpx.AsyncClient, path: str, body: dict) -> list[str]:
    """POST one run; return the raw ``data:`` strings of its SSE events."""
    out = []
    headers = {"Accept": "text/event-stream"}
    async with aconnect_sse(client, "POST", path, json=body, headers=headers) as source:
        source.response.raise_for_status()
        async for sse in source.aiter_sse():
            if sse.data:
                out.append(sse.data if "\n" not in sse.data else json.dumps(json.loads(sse.data)))
    return out


async def record_flow(flow: Flow, app: Any, out: Path) -> dict:
    transcript, pending, runs = Transcript(), [], []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://example") as client:
        for n, step in enumerate(flow.steps, start=1):
            body = build_body(flow, n, transcript, step, pending)
            raw = await post_run(client, flow.path, body)
            events = [json.loads(line) for line in raw]
            for ev in events:
                transcript.apply(ev)
            pending = pending_interrupts(events)
            stem = f"{flow.key}_{n}"
            (out / f"{stem}.request.json").write_text(json.dumps(body, indent=2) + "\n")
            (out / f"{stem}.jsonl").write_text("".join(line + "\n" for line in raw))
            runs.append({"n": n, "sends": step[0], "events": ", ".join(e["type"] for e in events)})
    return {"key": flow.key, "producer": flow.producer, "mode": flow.mode, "flow": flow.name, "route": flow.path,
            "description": flow.description, "runs": runs}


def producers() -> dict[str, tuple[Callable[[], Any], Callable[[], list[Flow]]]]:
    from examples import langgraph_agent, pydantic_ai_agent

    return {
        "langgraph": (langgraph_agent.create_app, langgraph_flows),
        "pydanticai": (pydantic_ai_agent.create_app, pydantic_ai_flows),
    }


async def main(out: Path, only: str | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    index = {
        "versions": {p: version(p) for p in ("ag-ui-protocol", "ag-ui-langgraph", "langgraph", "pydantic-ai-slim")},
        "naming": "<producer>_<mode>_<flow>_<n>.jsonl / .request.json, n = run index from 1",
        "flows": [],
    }
    for create_app, flows in producers().values():
        for flow in flows():
            if only and not flow.key.startswith(only):
                continue
            entry = await record_flow(flow, create_app(), out)  # a fresh app: empty checkpointers
            index["flows"].append(entry)
            print(f"{flow.key}: " + " | ".join(r["events"] for r in entry["runs"]))
    if not only:
        (out / "index.json").write_text(json.dumps(index, indent=2) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--only", help="record only flows whose key starts with this")
    args = parser.parse_args()
    asyncio.run(main(args.out, args.only))
