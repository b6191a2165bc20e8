"""What the people's routing tells the app and the webhook: ``assigned``, ``reminder``, ``escalated``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...tab import server_secret
from .. import notifier

if TYPE_CHECKING:
    from ...agui import AgentSession
    from ...model.people import People
    from ...store.requests import RequestRow

__all__ = ["assigned", "later"]


async def assigned(people: People, row: RequestRow, session: AgentSession | None) -> None:
    """``assigned``: a request waits for its assignees (with its decision link when it has one)."""
    if not notifier.wanted(row.owner):
        return
    await server_secret.ready()
    from ...model.requests import about
    from ..links import url_for

    said = about(session, row.interrupt_id) if session is not None else {"tool": row.tool}
    url = url_for(row.owner, session, row.interrupt_id) if session is not None else ""
    await notifier.emit(row.owner, [notifier.notification(
        "assigned", row.owner, row.thread_id, run_id=row.run_id, interrupt_id=row.interrupt_id, reason=row.reason,
        **said, expires_at=row.expires_at.isoformat() if row.expires_at else "", decide_url=url,
        assignees=list(row.assignees))])


async def later(event: str, row: RequestRow) -> None:
    """``reminder`` or ``escalated`` (or ``assigned`` again after a reassignment), from the stored row."""
    if not notifier.wanted(row.owner):
        return
    await server_secret.ready()
    await notifier.emit(row.owner, [notifier.notification(
        event, row.owner, row.thread_id, run_id=row.run_id, interrupt_id=row.interrupt_id, reason=row.reason,
        tool=row.tool, expires_at=row.expires_at.isoformat() if row.expires_at else "",
        assignees=list(row.assignees))])
