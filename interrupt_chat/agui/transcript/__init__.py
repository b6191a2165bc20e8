"""The reducer: AG-UI events folded into a transcript a chat can draw and send back (:mod:`.core`)."""

from ..message_views import MessageView, RunStatus, ToolCallStatus, ToolCallView
from .core import MAX_PARTS as MAX_PARTS  # importable from here, as before the split
from .core import MAX_TEXT_CHARS as MAX_TEXT_CHARS
from .core import Transcript

__all__ = ["MessageView", "RunStatus", "ToolCallStatus", "ToolCallView", "Transcript"]

# Pickles (Reflex's state, in Redis or on disk) name the class by this path, as before it had a module of
# its own: a pickle made before loads here, and one made here loads in the code from before.
Transcript.__module__ = __name__
