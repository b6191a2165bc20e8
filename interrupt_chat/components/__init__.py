"""Chat components: one file per part (chat, message, composer, interrupt slot, behaviour, page scripts)."""

from .chat import chat, run_status
from .composer import composer
from .interrupt_slot import SlotProps, default_slot, interrupt_card, slot_container
from .message import message_row, safe_markdown, tool_call_card
from .page_script import page_script

__all__ = [
    "SlotProps",
    "chat",
    "composer",
    "default_slot",
    "interrupt_card",
    "message_row",
    "page_script",
    "run_status",
    "safe_markdown",
    "slot_container",
    "tool_call_card",
]
