"""What the people's routing tells the app, the webhook, and the recipients' mail and Slack.

``assigned`` (a request waits for its assignees), ``reminder`` and ``escalated``: to the chat's
``notify`` function and the webhook (as every notification), and to each recipient through the
channels they chose (:mod:`..channels.reach`): all assignees when a request is assigned (or
reassigned), the current ones for a reminder, the new ones for an escalation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...tab import server_secret
from .. import notifier
from ..channels import reach
from . import core

if TYPE_CHECKING:
    from ...agui import AgentSession
    from ...model.people import People
    from ...store.requests import RequestRow

__all__ = ["assigned", "later"]


async def assigned(people: People, row: RequestRow, session: AgentSession | None) -> None:
    """``assigned``: a request waits for its assignees (with its decision link when it has one)."""
    await reach.reach("assigned", people, row, await core.recipients(people, row.assignees))
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


async def later(event: str, row: RequestRow, people: People, new: Sequence[str] | None = None) -> None:
    """``reminder`` or ``escalated`` (or ``assigned`` after a reassignment), from the stored row.

    ``new``: who the message goes to (an escalation's new assignees); default every assignee.
    """
    await reach.reach(event, people, row, await core.recipients(people, row.assignees if new is None else new))
    if not notifier.wanted(row.owner):
        return
    await server_secret.ready()
    await notifier.emit(row.owner, [notifier.notification(
        event, row.owner, row.thread_id, run_id=row.run_id, interrupt_id=row.interrupt_id, reason=row.reason,
        tool=row.tool, expires_at=row.expires_at.isoformat() if row.expires_at else "",
        assignees=list(row.assignees))])
