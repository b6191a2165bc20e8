"""Where the modules that lived at the package's top before the layers (docs/decisions/0024) live now.

``interrupt_chat/__init__.py`` keeps the old import paths working with this table. Names stored
under a module's path (a chat's identity names its configuration classes by module, and a
Reflex state's name holds its module) are kept under the old path, so nothing stored moves.
"""

from __future__ import annotations

__all__ = ["MOVED", "old_name"]

MOVED = {  # the module paths before the layers -> where they live now
    "answers": "tab.answers",
    "attaching": "tab.attaching",
    "branching": "tab.branching",
    "bulk": "approvals.bulk",
    "cards": "model.cards",
    "decide": "approvals.decide",
    "declaring": "components.declaring",
    "demo_agent": "demo.agent",
    "dojo_pages": "demo.dojo_pages",
    "driver": "tab.driver",
    "emit_tuning": "workers.emit_tuning",
    "endpoint": "tab.endpoint",
    "expiry": "approvals.expiry",
    "feedback": "tab.feedback",
    "files": "model.files",
    "follow": "approvals.follow",
    "forms": "model.forms",
    "gc_tuning": "workers.gc_tuning",
    "headless": "approvals.headless",
    "history": "model.history",
    "hydrate": "tab.hydrate",
    "identity": "tab.identity",
    "inbox": "approvals.inbox",
    "links": "approvals.links",
    "live": "tab.live",
    "load": "workers.load",
    "missing_pages": "approvals.missing_pages",
    "mixins": "tab.mixins",
    "notifier": "approvals.notifier",
    "orphans": "tab.orphans",
    "page_check": "tab.page_check",
    "paging": "tab.paging",
    "persistence": "tab.persistence",
    "policies": "model.policies",
    "presence": "workers.presence",
    "proxy_reads": "workers.proxy_reads",
    "queue": "model.queue",
    "reasons": "model.reasons",
    "registry": "assembly.registry",
    "routing": "tab.routing",
    "rule_answers": "approvals.rule_answers",
    "runs": "workers.runs",
    "sending": "tab.sending",
    "state": "assembly.state",
    "streaming": "tab.streaming",
    "sync": "workers.sync",
    "threads": "tab.threads",
    "threads_db": "store.threads_db",
    "tools": "tab.tools",
    "trail": "tab.trail",
    "views": "model.views",
}

_BACK = {f"interrupt_chat.{new}": f"interrupt_chat.{old}" for old, new in MOVED.items()}
_BACK["interrupt_chat.demo.site"] = "interrupt_chat.interrupt_chat"  # the demo site's module before


def old_name(module: str) -> str:
    """The path ``module`` had before the layers (itself if it did not move)."""
    for new in sorted(_BACK, key=len, reverse=True):
        if module == new or module.startswith(new + "."):
            return _BACK[new] + module[len(new):]
    return module
