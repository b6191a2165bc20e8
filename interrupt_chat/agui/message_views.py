"""The transcript's messages and tool calls as a chat reads them (:class:`~.transcript.Transcript` owns them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .sanitize import parse_json

__all__ = ["MessageView", "RunStatus", "ToolCallStatus", "ToolCallView"]

ToolCallStatus = Literal["streaming", "running", "awaiting_approval", "complete", "failed"]
RunStatus = Literal["idle", "running", "finished", "cancelled", "error"]


@dataclass
class ToolCallView:
    """A tool call on an assistant message; ``args`` is parsed once the call is complete.

    Read it freely; change it only through :class:`Transcript` (its owner caches the wire message
    built from it and must hear of every change).
    """

    id: str
    name: str
    parent_message_id: str
    args_parts: list[str] = field(default_factory=list)
    ended: bool = False
    failed: bool = False
    result: str | None = None
    encrypted_value: str | None = None
    awaiting: bool = False
    rejected: bool = False  # the person denied (or cancelled) its approval

    @property
    def args_text(self) -> str:
        """The arguments as streamed so far: raw JSON text, possibly incomplete."""
        if len(self.args_parts) > 1:
            self.args_parts[:] = ["".join(self.args_parts)]
        return self.args_parts[0] if self.args_parts else ""

    @property
    def args(self) -> Any:
        """The arguments as JSON, or None while streaming or when they do not parse."""
        if not self.ended:
            return None
        try:
            return parse_json(self.args_text or "{}")  # bounded depth, no lone surrogates
        except ValueError:
            return None

    @property
    def status(self) -> ToolCallStatus:
        """Where the call stands: a result wins, then failure, then a pending approval."""
        if self.result is not None:
            return "complete"
        if self.failed:
            return "failed"
        if self.awaiting:
            return "awaiting_approval"
        return "running" if self.ended else "streaming"


@dataclass
class MessageView:
    """One transcript message. ``role`` follows AG-UI (user, assistant, tool, system, …).

    Read it freely; change it only through :class:`Transcript` (see :class:`ToolCallView`).
    """

    id: str
    role: str
    parts: list[str] = field(default_factory=list)
    name: str | None = None
    tool_call_ids: list[str] = field(default_factory=list)
    tool_call_id: str | None = None  # tool messages: the call they answer
    error: str | None = None
    encrypted_value: str | None = None
    activity_type: str | None = None
    activity_content: dict[str, Any] | None = None
    streaming: bool = False
    raw_content: Any = None  # non-text content (multimodal parts), kept whole for sending back

    @property
    def content(self) -> str:
        """The text so far (the streamed deltas joined)."""
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""
