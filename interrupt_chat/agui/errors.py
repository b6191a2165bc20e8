"""Every error the protocol core raises, under one base class.

::

    AguiError                       base: catch this to catch anything from interrupt_chat.agui
    ├── AgentError                  a run could not be completed (transport); .started
    │   ├── AgentConfigurationError no agent URL is configured
    │   ├── AgentConnectionError    the agent cannot be reached, or the connection dropped
    │   ├── AgentTimeoutError       connecting, or waiting for the next event, took too long
    │   ├── AgentHTTPError          an HTTP error status (.status, .body)
    │   ├── AgentStreamError        not an event stream, or a data line that is not an event
    │   └── RunCancelled            the client stopped the run
    ├── MalformedEvent              a wire object that is not a valid AG-UI event (also ValueError)
    ├── ChunkError                  a ``*_CHUNK`` sequence that cannot be expanded (also ValueError)
    ├── ProtocolViolation           events out of order (also ValueError)
    └── RunInFlight                 a second run on a thread that is running (also RuntimeError)

Errors that wrap an ``httpx`` error keep it as ``__cause__``. Their messages are written for a
person and never hold a request body.
"""

from __future__ import annotations

from http import HTTPStatus

__all__ = [
    "AgentConfigurationError",
    "AgentConnectionError",
    "AgentError",
    "AgentHTTPError",
    "AgentStreamError",
    "AgentTimeoutError",
    "AguiError",
    "ChunkError",
    "MalformedEvent",
    "ProtocolViolation",
    "RunCancelled",
    "RunInFlight",
    "ToolCallNotWaiting",
]


class AguiError(Exception):
    """Base class of every error raised by :mod:`interrupt_chat.agui`."""


class AgentError(AguiError):
    """A run could not be completed. ``started`` says whether any event had arrived."""

    started: bool = False


class AgentConfigurationError(AgentError):
    """No agent URL is configured, so there is nothing to connect to."""


class AgentConnectionError(AgentError):
    """The agent could not be reached, or the connection dropped mid-stream."""


class AgentTimeoutError(AgentError):
    """Connecting to the agent, or waiting for its next event, took too long."""


class AgentHTTPError(AgentError):
    """The agent answered with an HTTP error status (input rejected before the run started)."""

    def __init__(self, status: int, body: str, reason: str | None = None) -> None:
        """Keep the status and a plain-text excerpt of the body; the message names status, reason and excerpt."""
        self.status, self.body = status, body
        if reason is None:
            try:
                reason = HTTPStatus(status).phrase
            except ValueError:
                reason = ""
        self.reason = reason
        super().__init__(f"the agent answered HTTP {status}" + (f" {reason}" if reason else "")
                         + (f": {body}" if body else ""))


class AgentStreamError(AgentError):
    """The response is not an AG-UI event stream, or a ``data:`` line is not a valid event."""


class RunCancelled(AgentError):
    """The run was cancelled by the client (stop button)."""


class MalformedEvent(AguiError, ValueError):
    """A wire object is not a valid AG-UI event."""


class ChunkError(AguiError, ValueError):
    """A ``TEXT_MESSAGE_CHUNK`` / ``TOOL_CALL_CHUNK`` sequence cannot be expanded."""


class ProtocolViolation(AguiError, ValueError):
    """An event breaks the AG-UI ordering rules (the run fails with this message)."""


class RunInFlight(AguiError, RuntimeError):
    """A thread runs one run at a time: ``send``/``submit`` while a run is in flight."""


class ToolCallNotWaiting(AguiError, ValueError):
    """``respond``/``decline`` for a tool call that does not wait for a result (S28: one result per call)."""
