"""The demo site's pages for the AG-UI dojo features it did not have yet, one module each (users of the public API).

- ``/document`` (predictive_state_updates): :mod:`.document`.
- ``/reasoning`` (agentic_chat_reasoning): :mod:`.reasoning`.
- ``/haiku`` (tool_based_generative_ui): :mod:`.haiku`.
- ``/subgraphs`` (subgraphs): :mod:`.subgraphs`.

Each page's chat talks to ``INTERRUPT_CHAT_DOJO_URL/<feature>`` when that is set (:func:`.urls.dojo_url`),
else to the demo agent. The older dojo pages are in ``interrupt_chat/demo_dojo.py``.
"""

from .document import DOCUMENT, ConfirmChangesTool, document_chat
from .haiku import HAIKU, haiku_card, haiku_chat
from .reasoning import REASONING, reasoning_chat
from .subgraphs import SUBGRAPHS, subgraphs_chat
from .urls import DOJO_URL_ENV, dojo_url

__all__ = ["DOCUMENT", "DOJO_URL_ENV", "HAIKU", "REASONING", "SUBGRAPHS", "ConfirmChangesTool", "document_chat",
           "dojo_url", "haiku_card", "haiku_chat", "reasoning_chat", "subgraphs_chat"]
