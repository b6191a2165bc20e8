"""interrupt_chat: a Reflex chat for AG-UI agents that handles their interrupts.

``interrupt_chat.agui`` is the framework-free protocol core. The Reflex API (``Chat``,
``chat``, ``InterruptState``, …) is loaded lazily on first use, so importing the core never imports Reflex.

The package is laid out by layer (docs/decisions/0024): ``agui`` < ``model`` < ``store`` < ``workers`` <
``tab`` < ``approvals`` < ``assembly`` < ``components`` < ``demo``. Modules that lived at the top before
(``interrupt_chat.threads_db``, ``interrupt_chat.state``, …) still import under their old names: the
same module object, so states pickled before the move load too.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .model.old_paths import MOVED

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time the names load on first use
    from .approvals.channels.slack import slack_routes
    from .approvals.expiry import expiry_sweeper
    from .approvals.metrics import metrics_routes
    from .assembly.state import ChatState, InterruptState
    from .components.chat import chat, chat_state
    from .components.decide import decide_page
    from .components.declaration import Chat
    from .components.inbox import approvals_inbox
    from .components.interrupt_slot import SlotProps
    from .components.policies import policy_list
    from .components.threads import audit_trail, thread_list
    from .components.tool_wait import ToolCall
    from .model.files import Attachments
    from .model.people import ANONYMOUS, Escalation, People, Person, Request
    from .model.policy_file import PolicyFileError, Risk
    from .model.reasons import for_reasons
    from .tab.endpoint import set_default_agent_url
    from .tab.tools import FrontendToolState
    from .workers.emit_tuning import tune_emit
    from .workers.event_tuning import tune_events
    from .workers.gc_tuning import tune_gc

__all__ = [
    "ANONYMOUS",
    "Attachments",
    "Chat",
    "ChatState",
    "Escalation",
    "FrontendToolState",
    "InterruptState",
    "People",
    "Person",
    "PolicyFileError",
    "Request",
    "Risk",
    "SlotProps",
    "ToolCall",
    "approvals_inbox",
    "audit_trail",
    "chat",
    "chat_state",
    "decide_page",
    "expiry_sweeper",
    "for_reasons",
    "metrics_routes",
    "policy_list",
    "set_default_agent_url",
    "slack_routes",
    "thread_list",
    "tune_emit",
    "tune_events",
    "tune_gc",
]

_LAZY = {
    "Attachments": "interrupt_chat.model.files",
    "ANONYMOUS": "interrupt_chat.model.people",
    "Escalation": "interrupt_chat.model.people",
    "People": "interrupt_chat.model.people",
    "Person": "interrupt_chat.model.people",
    "Request": "interrupt_chat.model.people",
    "PolicyFileError": "interrupt_chat.model.policy_file",
    "Risk": "interrupt_chat.model.policy_file",
    "Chat": "interrupt_chat.components.declaration",
    "ChatState": "interrupt_chat.assembly.state",
    "InterruptState": "interrupt_chat.assembly.state",
    "FrontendToolState": "interrupt_chat.tab.tools",
    "ToolCall": "interrupt_chat.components.tool_wait",
    "SlotProps": "interrupt_chat.components.interrupt_slot",
    "chat": "interrupt_chat.components.chat",
    "chat_state": "interrupt_chat.components.chat",
    "decide_page": "interrupt_chat.components.decide",
    "set_default_agent_url": "interrupt_chat.tab.endpoint",
    "expiry_sweeper": "interrupt_chat.approvals.expiry",
    "slack_routes": "interrupt_chat.approvals.channels.slack",
    "metrics_routes": "interrupt_chat.approvals.metrics",
    "tune_gc": "interrupt_chat.workers.gc_tuning",
    "tune_emit": "interrupt_chat.workers.emit_tuning",
    "tune_events": "interrupt_chat.workers.event_tuning",
    "for_reasons": "interrupt_chat.model.reasons",
    "thread_list": "interrupt_chat.components.threads",
    "approvals_inbox": "interrupt_chat.components.inbox",
    "audit_trail": "interrupt_chat.components.threads",
    "policy_list": "interrupt_chat.components.policies",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'interrupt_chat' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, lazy ones included."""
    return sorted([*globals(), *__all__])



class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``interrupt_chat.<old>`` is the module at its new path (not a copy: one module, one set of globals)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        """A spec for an old path (and anything under it), else None."""
        head, _, rest = fullname.partition(".")
        if head != __name__:
            return None
        old = rest.partition(".")[0]
        if old not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The module under its new name."""
        old, _, tail = spec.name.partition(".")[2].partition(".")
        return importlib.import_module(".".join(filter(None, (__name__, MOVED[old], tail))))

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module ran under its new name."""


if not any(isinstance(finder, _OldPaths) for finder in sys.meta_path):
    sys.meta_path.insert(0, _OldPaths())
