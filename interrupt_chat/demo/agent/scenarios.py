"""The scripted scenarios, selected by the first word of the last user message.

Each scenario is a generator of the events that follow RUN_STARTED, ending with the run's
terminal event. Scenarios raising interrupts register them through ``RunContext.interrupt``.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import string
from collections.abc import Callable, Generator, Iterator
from typing import Any

from ag_ui.core import BaseEvent, RunAgentInput, UserMessage

from . import backlog, dojo, frontend, generative, interrupts, payments
from .context import RunContext, last_user_text
from .events import new_id
from .store import PendingInterrupt

__all__ = [
    "DEFAULT_SCENARIO",
    "LONG_DELTAS",
    "SCENARIOS",
    "SCENARIO_NAMES",
    "XSS_PAYLOADS",
    "escape_markdown",
    "last_user_text",
    "select_scenario",
]

Scenario = Callable[[RunContext], Iterator[BaseEvent]]

DEFAULT_SCENARIO = "markdown"
#: Number of deltas of the ``long`` scenario (about 60 s at the default delay).
LONG_DELTAS = 2000
XSS_PAYLOADS = (
    "<script>window.__xss=1</script>",
    '<img src=x onerror="window.__xss=1">',
    "[click](javascript:window.__xss=1)",
)

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&])")
_ECHO_LIMIT = 200


# -- selection ----------------------------------------------------------------------------


def select_scenario(body: RunAgentInput) -> str:
    """First word of the last user message, lowercased, outer punctuation stripped (``/choice`` → ``choice``)."""
    words = last_user_text(body).split()
    word = words[0].strip(string.punctuation).lower() if words else ""
    return word if word in SCENARIOS else DEFAULT_SCENARIO


def escape_markdown(text: str) -> str:
    """Echo untrusted text as plain text inside markdown: one line, every markup character escaped."""
    flat = " ".join(text.split())
    if len(flat) > _ECHO_LIMIT:
        flat = flat[:_ECHO_LIMIT] + "…"
    return _MD_SPECIAL.sub(r"\\\1", flat)


# -- plain answers ------------------------------------------------------------------------


def markdown(ctx: RunContext) -> Iterator[BaseEvent]:
    """Default: a streamed markdown answer echoing the user's text as escaped plain text."""
    yield ctx.ev.step_started("respond")
    yield ctx.snapshot("markdown")
    yield from ctx.ev.text_message(_markdown_answer(last_user_text(ctx.body)))
    yield ctx.ev.step_finished("respond")
    yield ctx.ev.run_finished()


def _markdown_answer(user_text: str) -> str:
    echo = escape_markdown(user_text) or "(nothing)"
    return (
        "## Hello from the demo agent\n\n"
        f"You said: {echo}\n\n"
        "Things to try:\n\n"
        "- **approval**, **choice**, **credential**, **multi**, **expiring**, **pay**: interrupts\n"
        "- **legacy**, **question**, **legacy-string**, **both**: the legacy `on_interrupt` channel\n"
        "- **tools**, **long**, **error**, **xss**: everything else\n\n"
        "```python\n"
        "def greet(name: str) -> str:\n"
        '    return f"Hello, {name}!"\n'
        "```\n"
    )


def history(ctx: RunContext) -> Iterator[BaseEvent]:
    """What the agent received: the number of messages and the user's texts in order, and the run's number.

    Shows which branch's history a run carries (edit, regenerate) and that a regenerated answer is a new one.
    """
    said = [escape_markdown(m.content if isinstance(m.content, str) else " ".join(
        getattr(p, "text", "") for p in m.content)) for m in ctx.body.messages if isinstance(m, UserMessage)]
    runs = len(ctx.store.records(ctx.body.thread_id))
    last = next((m for m in reversed(ctx.body.messages) if isinstance(m, UserMessage)), None)
    files: list[Any] = [p for p in (last.content if last is not None and isinstance(last.content, list) else [])
                        if getattr(p, "source", None) is not None]
    seen = "".join(f" · a file: {escape_markdown(str((p.metadata or {}).get('name', p.type)))} ({p.source.mime_type}, "
                   f"{_size(p.source)})" for p in files)
    yield from ctx.ev.text_message(f"I received {len(ctx.body.messages)} messages (run {runs} on this thread). "
                                   f"You said: {' · '.join(f'“{t}”' for t in said)}{seen}")
    yield ctx.ev.run_finished()


def _size(source: Any) -> str:
    """A data source's decoded size, or its URL."""
    if source.type == "data":
        try:
            return f"{len(base64.b64decode(source.value, validate=True))} bytes"
        except ValueError:
            return "not base64"
    return str(source.value)[:200]


def long(ctx: RunContext) -> Iterator[BaseEvent]:
    """A very long answer (``LONG_DELTAS`` deltas) to exercise the stop button."""
    sentence = "This is a very long answer streamed slowly so that you can stop it ."
    words = itertools.cycle(sentence.split())
    text = " ".join(itertools.islice(words, LONG_DELTAS))
    yield from ctx.ev.text_message(text)
    yield ctx.ev.run_finished()


def xss(ctx: RunContext) -> Iterator[BaseEvent]:
    """Markdown with hostile payloads; the client must render them inert."""
    blocks = ["Here are some hostile payloads; they must stay inert:", *XSS_PAYLOADS]
    yield from ctx.ev.text_message("\n\n".join(blocks))
    yield ctx.ev.run_finished()


def tools(ctx: RunContext) -> Iterator[BaseEvent]:
    """A tool call that completes without any interrupt, then an answer."""
    message_id, tool_call_id = new_id("msg"), new_id("call")
    yield ctx.ev.step_started("call_tool")
    yield from ctx.ev.text_message("Let me check the weather.", message_id)
    yield from ctx.ev.tool_call(tool_call_id, "get_weather", {"city": "Paris"}, message_id)
    yield ctx.ev.tool_result(tool_call_id, json.dumps({"city": "Paris", "forecast": "sunny", "tempC": 21}))
    yield ctx.ev.step_finished("call_tool")
    yield ctx.snapshot("tools")
    yield from ctx.ev.text_message("It is sunny in Paris, 21 °C.")
    yield ctx.ev.run_finished()


# -- standard interrupts ------------------------------------------------------------------


def _delete_files_call(ctx: RunContext) -> Generator[BaseEvent, None, PendingInterrupt]:
    """Assistant text + streamed ``delete_files`` tool call; returns its approval interrupt."""
    message_id, tool_call_id = new_id("msg"), new_id("call")
    yield from ctx.ev.text_message("I can clean up the old reports. I need your approval first.", message_id)
    yield from ctx.ev.tool_call(tool_call_id, "delete_files", interrupts.DELETE_ARGS, message_id)
    return interrupts.approval(tool_call_id, "delete_files", interrupts.DELETE_ARGS)


def approval(ctx: RunContext) -> Iterator[BaseEvent]:
    yield ctx.ev.step_started("plan")
    pending = yield from _delete_files_call(ctx)
    yield ctx.ev.step_finished("plan")
    yield ctx.snapshot("approval")
    yield from ctx.interrupt("approval", [pending])


def choice(ctx: RunContext) -> Iterator[BaseEvent]:
    yield ctx.snapshot("choice")
    yield from ctx.interrupt("choice", [interrupts.choice()])


def credential(ctx: RunContext) -> Iterator[BaseEvent]:
    yield from ctx.interrupt("credential", [interrupts.credential()])


def multi(ctx: RunContext) -> Iterator[BaseEvent]:
    """Three interrupts in one outcome: a tool approval, a choice and a confirmation."""
    tool_approval = yield from _delete_files_call(ctx)
    pending = [tool_approval, interrupts.choice(), interrupts.confirmation("Send a summary email?")]
    yield ctx.snapshot("multi")
    yield from ctx.interrupt("multi", pending)


def expiring(ctx: RunContext) -> Iterator[BaseEvent]:
    seconds = ctx.config.expires_in
    pending = interrupts.confirmation(f"Confirm within {seconds:g} seconds?", expires_in=seconds)
    yield from ctx.interrupt("expiring", [pending])


# -- legacy on_interrupt ------------------------------------------------------------------


def legacy(ctx: RunContext) -> Iterator[BaseEvent]:
    """CUSTOM on_interrupt with a JSON-string value, then a plain RUN_FINISHED."""
    question = "Send the weekly report?"
    yield from ctx.interrupt("legacy", legacy_value=interrupts.legacy_value(question, question=question))


def legacy_string(ctx: RunContext) -> Iterator[BaseEvent]:
    """CUSTOM on_interrupt whose value is a plain (non-JSON) string."""
    yield from ctx.interrupt("legacy-string", legacy_value="approval: publish the draft?")


def question(ctx: RunContext) -> Iterator[BaseEvent]:
    yield from ctx.interrupt("question", legacy_value=json.dumps({"question": "Ship it?"}))


def both(ctx: RunContext) -> Iterator[BaseEvent]:
    """Both channels for the same interrupt in one run (ag-ui-langgraph with emit_interrupt_outcome)."""
    prompt = "Deploy to production?"
    pending = interrupts.confirmation(prompt, langgraph_id=True)
    value = interrupts.legacy_value(prompt, reason="confirmation")
    yield from ctx.interrupt("both", [pending], legacy_value=value)


def error(ctx: RunContext) -> Iterator[BaseEvent]:
    """A legacy interrupt followed by RUN_ERROR: nothing stays open."""
    yield ctx.ev.custom("on_interrupt", interrupts.legacy_value("Retry the failed step?"))
    yield ctx.ev.run_error("Simulated failure after interrupt", "SIMULATED")


SCENARIOS: dict[str, Scenario] = {
    "markdown": markdown,
    "approval": approval,
    "choice": choice,
    "credential": credential,
    "multi": multi,
    "expiring": expiring,
    "pay": payments.pay,
    "legacy": legacy,
    "legacy-json": legacy,
    "legacy-string": legacy_string,
    "question": question,
    "both": both,
    "error": error,
    "long": long,
    "xss": xss,
    "tools": tools,
    "history": history,
    "backlog": backlog.backlog,
    "write": dojo.write,
    "think": dojo.think,
    "haiku": dojo.haiku,
    "flights": dojo.flights,
    "plan": dojo.plan,
    "steps": frontend.steps,
    "clock": frontend.clock,
    "confirm": frontend.confirm,
    "progress": generative.progress,
    "recipe": generative.recipe,
}
SCENARIO_NAMES = tuple(SCENARIOS)
