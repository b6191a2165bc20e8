"""Chat components: one file per part (chat, message, composer, interrupt slot, behaviour)."""

from .chat import chat, run_status
from .composer import composer
from .interrupt_slot import SlotProps, default_slot, interrupt_card, slot_container
from .message import message_row, safe_markdown, tool_call_card

__all__ = [
    "SlotProps",
    "chat",
    "composer",
    "default_slot",
    "interrupt_card",
    "message_row",
    "run_status",
    "safe_markdown",
    "slot_container",
    "tool_call_card",
]
