"""An AG-UI agent that puts an XSS payload into every string a producer controls (S24).

The last user message picks the reply: ``xss-text`` (markdown, reasoning, a tool call whose name,
arguments and result carry the payload), ``xss-interrupt`` (interrupt messages, schema titles,
descriptions, enum labels, tool metadata), ``xss-legacy`` / ``xss-legacy-object`` (legacy values),
``xss-error`` (``RUN_ERROR`` text), ``xss-http`` (an HTTP error body), ``xss-html`` (an HTML page).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from tests.unit.agents import finished, run_error, sse, started, text, tool_call, tool_result

PAYLOAD = ('<script>window.__xss=1</script><img src=x onerror="window.__xss=1">'
           '<a href="javascript:window.__xss=1">link</a>[md](javascript:window.__xss=1)'
           '<svg onload="window.__xss=1"></svg><iframe srcdoc="<script>parent.__xss=1</script>"></iframe>')


def _last_user_text(body: dict[str, Any]) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return str(users[-1].get("content", "")) if users else ""


def _interrupts(body: dict[str, Any], call_id: str) -> list[dict[str, Any]]:
    return [
        {"id": "xss-approval", "reason": PAYLOAD, "message": PAYLOAD, "toolCallId": call_id,
         "metadata": {"tool_name": PAYLOAD, "tool_input": {"x": PAYLOAD}},
         "responseSchema": {"type": "object", "properties": {"approved": {"type": "boolean"},
                                                              "editedArgs": {"type": "object"}}}},
        {"id": "xss-form", "reason": "input_required", "message": PAYLOAD,
         "responseSchema": {"type": "object", "title": PAYLOAD, "description": PAYLOAD, "required": ["pick"],
                            "properties": {"pick": {"type": "string", "title": PAYLOAD, "description": PAYLOAD,
                                                    "enum": [PAYLOAD, "plain"]},
                                           "note": {"type": "string", "title": PAYLOAD, "default": PAYLOAD}}}},
    ]


def reply(body: dict[str, Any]) -> Response:
    """The scripted answer to one request."""
    run, thread = body["runId"], body["threadId"]
    said = _last_user_text(body)
    if body.get("resume") or (body.get("forwardedProps") or {}).get("command"):
        events = [started(run, thread), *text(f"{run}-done", "Resumed: " + PAYLOAD), finished(run, thread)]
    elif said == "xss-http":
        return Response("agent failed: " + PAYLOAD, status_code=500, media_type="text/plain")
    elif said == "xss-html":
        return Response(f"<html><body><h1>502</h1>{PAYLOAD}</body></html>", status_code=502, media_type="text/html")
    elif said == "xss-error":
        events = [started(run, thread), *text(f"{run}-m", "about to fail"), run_error(PAYLOAD, code=PAYLOAD)]
    elif said == "xss-interrupt":
        call = f"{run}-call"
        events = [started(run, thread), *text(f"{run}-m", PAYLOAD),
                  *tool_call(call, "delete_files", {"path": PAYLOAD}, parent=f"{run}-m"),
                  finished(run, thread, interrupts=_interrupts(body, call))]
    elif said.startswith("xss-legacy"):
        value = json.dumps({"message": PAYLOAD, "question": PAYLOAD}) if said.endswith("object") else PAYLOAD
        events = [started(run, thread), {"type": "CUSTOM", "name": "on_interrupt", "value": value},
                  finished(run, thread)]
    else:  # xss-text
        call = f"{run}-call"
        events = [started(run, thread), {"type": "STEP_STARTED", "stepName": PAYLOAD},
                  {"type": "REASONING_START", "messageId": f"{run}-r"},
                  {"type": "REASONING_MESSAGE_START", "messageId": f"{run}-r", "role": "reasoning"},
                  {"type": "REASONING_MESSAGE_CONTENT", "messageId": f"{run}-r", "delta": PAYLOAD},
                  {"type": "REASONING_MESSAGE_END", "messageId": f"{run}-r"},
                  {"type": "REASONING_END", "messageId": f"{run}-r"},
                  *text(f"{run}-m", "# Title " + PAYLOAD + "\n\n" + PAYLOAD + "\n\n```html\n" + PAYLOAD + "\n```"),
                  *tool_call(call, PAYLOAD, {"html": PAYLOAD}, parent=f"{run}-m"),
                  tool_result(f"{run}-result", call, PAYLOAD),
                  {"type": "STEP_FINISHED", "stepName": PAYLOAD},
                  finished(run, thread)]
    return Response(sse(*events), media_type="text/event-stream")


async def app(scope, receive, send) -> None:
    """ASGI entry point."""
    request = Request(scope, receive)
    body = json.loads(await request.body() or b"{}")
    await reply(body)(scope, receive, send)
