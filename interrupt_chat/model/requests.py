"""What a request of a thread's pending set asks, in the words a notification or an audit row uses."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..agui import AgentSession

__all__ = ["about"]


def about(session: AgentSession, interrupt_id: str) -> dict[str, str]:
    """What an interrupt of the thread's pending set asks: its ``message``, ``tool`` and ``tool_call_id``.

    Taken when it is answered (the ``decided`` / ``expired`` events name what was decided); a legacy
    set's (``interrupt_id`` "") message is its value's.
    """
    pending = session.tracker.pending
    if pending is None:
        return {}
    if pending.kind == "legacy":
        value = pending.raw_value
        message = value if isinstance(value, str) else value.get("message", "") if isinstance(value, dict) else ""
        return {"message": str(message or "")}
    interrupt = next((i for i in pending.interrupts if i.id == interrupt_id), None)
    if interrupt is None:
        return {}
    call_id = interrupt.tool_call_id or ""
    call = session.transcript.tool_calls.get(call_id) if call_id else None
    metadata = interrupt.metadata if isinstance(interrupt.metadata, dict) else {}
    tool = call.name if call is not None else metadata.get("tool_name") or ""
    return {"message": interrupt.message or "", "tool": str(tool), "tool_call_id": call_id}
