"""The demo site's pages for the AG-UI dojo's features, one module each (users of the public API only).

- ``/steps`` (human_in_the_loop): :mod:`.steps`; ``/confirm`` (an approval as a tool call): :mod:`.confirm`.
- ``/progress`` (agentic_generative_ui): :mod:`.progress`.
- ``/tool-ui`` (backend_tool_rendering): :mod:`.tool_ui`.
- ``/haiku`` (tool_based_generative_ui): :mod:`.haiku`.
- ``/shared-state`` (shared_state): :mod:`.recipe`.
- ``/document`` (predictive_state_updates): :mod:`.document`.
- ``/reasoning`` (agentic_chat_reasoning): :mod:`.reasoning`.
- ``/subgraphs`` (subgraphs): :mod:`.subgraphs`.

Each page's chat talks to ``INTERRUPT_CHAT_DOJO_URL/<feature>`` when that is set (:func:`.urls.dojo_url`),
else to the demo agent. ``/`` (agentic_chat) is the site's main chat, in ``interrupt_chat/interrupt_chat.py``.
"""

from .confirm import CONFIRM, ConfirmTool, confirm_chat
from .document import DOCUMENT, ConfirmChangesTool, document_chat
from .haiku import HAIKU, haiku_card, haiku_chat
from .progress import PROGRESS, progress_card, progress_chat
from .reasoning import REASONING, reasoning_chat
from .recipe import RECIPE, RecipeForm, recipe_chat
from .steps import STEPS, StepsTool, steps_chat
from .subgraphs import SUBGRAPHS, subgraphs_chat
from .tool_ui import WEATHER, weather_card, weather_chat
from .urls import DOJO_URL_ENV, dojo_url

__all__ = ["CONFIRM", "DOCUMENT", "DOJO_URL_ENV", "HAIKU", "PROGRESS", "REASONING", "RECIPE", "STEPS", "SUBGRAPHS",
           "WEATHER", "ConfirmChangesTool", "ConfirmTool", "RecipeForm", "StepsTool", "confirm_chat",
           "document_chat", "dojo_url", "haiku_card", "haiku_chat", "progress_card", "progress_chat",
           "reasoning_chat", "recipe_chat", "steps_chat", "subgraphs_chat", "weather_card", "weather_chat"]
