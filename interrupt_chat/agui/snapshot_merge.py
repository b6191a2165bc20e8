"""How a ``MESSAGES_SNAPSHOT`` merges into the transcript's messages: by id, in linear time."""

from __future__ import annotations

from collections.abc import Sequence

from .message_views import MessageView

__all__ = ["merge"]


def merge(current: Sequence[MessageView], incoming: list[MessageView]) -> list[MessageView]:
    """The merged message list: ``current``'s order kept, ``incoming``'s versions swapped in, new ids placed.

    ``incoming`` holds one version per id. A new message goes right after the known message before
    it in the snapshot; new messages before every known one are appended, in order. Client-only
    messages (activity, reasoning) the snapshot does not speak for stay where they are.
    """
    by_id = {view.id: view for view in incoming}
    roles = {view.role for view in incoming}
    known = {m.id for m in current} & by_id.keys()
    leading: list[MessageView] = []  # new messages before the first known one: appended
    following: dict[str, list[MessageView]] = {}  # known id -> the new messages right after it
    previous: str | None = None
    for view in incoming:
        if view.id in known:
            previous = view.id
        else:
            (following.setdefault(previous, []) if previous is not None else leading).append(view)
    merged: list[MessageView] = []
    carried: Sequence[MessageView] = ()  # the new messages after the last known one, placed before the next
    for message in current:
        if message.id in by_id:
            merged.extend(carried)
            merged.append(by_id.pop(message.id))
            carried = following.get(message.id, ())
        elif message.role in ("activity", "reasoning") and message.role not in roles:
            merged.append(message)  # client-only messages the snapshot does not speak for (they stay put)
    merged.extend(carried)
    merged.extend(leading)
    return merged
