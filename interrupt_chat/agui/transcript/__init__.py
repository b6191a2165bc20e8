"""The reducer: AG-UI events folded into a transcript a chat can draw and send back.

Each event costs O(1) (text and argument deltas are appended to lists, joined on read; messages
are found by id, and by position through an index). ``MESSAGES_SNAPSHOT`` merges by id in time
linear in the snapshot and the transcript (it speaks for the whole message list). The transcript
also builds the next run's ``messages`` (assistant ``toolCalls`` included, activity messages never
sent back), which producers such as pydantic-ai need to resume a tool call: each message's AG-UI
model is cached and rebuilt only when the message changed, so :meth:`Transcript.to_messages`
costs one dict lookup per message of history plus one build per changed message.

The fold reads like ``@ag-ui/client``'s ``defaultApplyEvents``: :meth:`Transcript.apply` looks the
event's type up in one table (:mod:`.fold`) and calls a small handler, grouped by job:

- :mod:`.core`: the :class:`Transcript` itself: its data and indexes, what a UI must redraw, the
  writes every job goes through (a message claimed, a delta grown), the next run's messages;
- :mod:`.run`: the run's lifecycle and steps, and a failed run;
- :mod:`.messages`: text messages and ``MESSAGES_SNAPSHOT``;
- :mod:`.reasoning`: reasoning messages and encrypted values;
- :mod:`.tool_calls`: tool calls, their results, and the marks a chat sets (approval, edited arguments);
- :mod:`.shared_state`: shared state and activity content (snapshots, JSON Patch deltas) and PredictState.
"""

from ..message_views import MessageView, RunStatus, ToolCallStatus, ToolCallView
from .core import MAX_PARTS as MAX_PARTS  # importable from here, as before the split
from .core import MAX_TEXT_CHARS as MAX_TEXT_CHARS
from .core import Transcript

__all__ = ["MessageView", "RunStatus", "ToolCallStatus", "ToolCallView", "Transcript"]

# Pickles (Reflex's state, in Redis or on disk) name the class by this path, as before it had a module of
# its own: a pickle made before loads here, and one made here loads in the code from before.
Transcript.__module__ = __name__
