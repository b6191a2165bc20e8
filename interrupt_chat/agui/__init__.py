"""interrupt_chat's framework-free AG-UI 1.0 client core (no Reflex import).

The pipeline, one module per stage: :mod:`.transport` (HTTP POST + SSE -> events),
:mod:`.events` (drop/strip rules), :mod:`.chunks` (``*_CHUNK`` expansion), :mod:`.verify`
(ordering rules), :mod:`.transcript` (the reducer), :mod:`.interrupts` (rules S1-S15), and
:mod:`.frontend_tools` (tools the chat declares and answers, S26-S31) and :mod:`.session`, which
ties them together for one thread. :mod:`.errors` holds the one
exception tree (base :class:`AguiError`).
"""

from .chunks import ChunkExpander
from .errors import (
    AgentConfigurationError,
    AgentConnectionError,
    AgentError,
    AgentHTTPError,
    AgentStreamError,
    AgentTimeoutError,
    AguiError,
    ChunkError,
    MalformedEvent,
    ProtocolViolation,
    RunCancelled,
    RunInFlight,
    ToolCallNotWaiting,
)
from .events import parse_event
from .frontend_tools import FrontendTool, FrontendTools, ToolWait
from .interrupts import Decision, InterruptTracker, Pending, interrupt_dict, is_expired, parse_expiry
from .session import AgentSession, new_id
from .transcript import MessageView, ToolCallView, Transcript
from .transport import AgentClient, AgentRun
from .verify import Verifier

__all__ = [
    "AgentClient",
    "AgentConfigurationError",
    "AgentConnectionError",
    "AgentError",
    "AgentHTTPError",
    "AgentRun",
    "AgentSession",
    "AgentStreamError",
    "AgentTimeoutError",
    "AguiError",
    "ChunkError",
    "ChunkExpander",
    "Decision",
    "FrontendTool",
    "FrontendTools",
    "InterruptTracker",
    "MalformedEvent",
    "MessageView",
    "Pending",
    "ProtocolViolation",
    "RunCancelled",
    "RunInFlight",
    "ToolCallNotWaiting",
    "ToolCallView",
    "ToolWait",
    "Transcript",
    "Verifier",
    "interrupt_dict",
    "is_expired",
    "new_id",
    "parse_event",
    "parse_expiry",
]
