"""interrupt_chat's framework-free AG-UI 1.0 client core (no Reflex import).

The pipeline, one module per stage: :mod:`.transport` (HTTP POST + SSE -> events),
:mod:`.events` (drop/strip rules), :mod:`.chunks` (``*_CHUNK`` expansion), :mod:`.verify`
(ordering rules), :mod:`.transcript` (the reducer), :mod:`.interrupts` (rules S1-S15), and
:mod:`.session`, which ties them together for one thread.
"""

from .chunks import ChunkError, ChunkExpander
from .events import MalformedEvent, parse_event
from .interrupts import Decision, InterruptTracker, Pending, is_expired, parse_expiry
from .session import AgentSession, new_id
from .transcript import MessageView, ToolCallView, Transcript
from .transport import (
    AgentClient,
    AgentConnectionError,
    AgentError,
    AgentHTTPError,
    AgentRun,
    AgentStreamError,
    AgentTimeoutError,
    RunCancelled,
)
from .verify import ProtocolViolation, Verifier

__all__ = [
    "AgentClient",
    "AgentConnectionError",
    "AgentError",
    "AgentHTTPError",
    "AgentRun",
    "AgentSession",
    "AgentStreamError",
    "AgentTimeoutError",
    "ChunkError",
    "ChunkExpander",
    "Decision",
    "InterruptTracker",
    "MalformedEvent",
    "MessageView",
    "Pending",
    "ProtocolViolation",
    "RunCancelled",
    "ToolCallView",
    "Transcript",
    "Verifier",
    "is_expired",
    "new_id",
    "parse_event",
    "parse_expiry",
]
