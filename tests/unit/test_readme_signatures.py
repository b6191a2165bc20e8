"""The README's list of public signatures is the code's: each line is ``inspect.signature`` of a public name
(annotations left out), so the README cannot drift from the API (issue 22)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import interrupt_chat as ic

README = Path(__file__).resolve().parents[2] / "README.md"
FUNCTIONS = ("chat", "chat_state", "approvals_inbox", "thread_list", "audit_trail", "policy_list", "decide_page",
             "expiry_sweeper", "set_default_agent_url", "Attachments", "tune_gc", "tune_emit", "for_reasons")
METHODS: dict[str, tuple[str, ...]] = {"Chat": ("view", "thread_list", "inbox", "audit_trail", "policy_list")}
EVENTS: dict[str, tuple[str, ...]] = {
    "InterruptState": ("resolve", "cancel", "remember_rule"),
    "ChatState": ("send_text", "stop", "new_thread", "switch_thread", "search_threads", "rename_thread",
                  "delete_thread", "set_agent_state", "inbox_resolve", "inbox_cancel", "inbox_remember",
                  "revoke_policy", "rate_message", "copy_message", "save_edit", "regenerate", "previous_branch",
                  "next_branch", "remove_attachment"),
    "FrontendToolState": ("respond", "decline", "submit"),
}


def rendered(name: str, fn: Any) -> str:
    signature = inspect.signature(fn)
    params = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()
              if p.name != "self"]
    return f"{name}{signature.replace(parameters=params, return_annotation=inspect.Signature.empty)}"


def documented() -> list[str]:
    text = README.read_text()
    block = re.search(r"<!-- signatures:start -->\n```text\n(.*?)```\n<!-- signatures:end -->", text, re.S)
    assert block, "the README has no signatures block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_readme_lists_every_public_signature_as_the_code_has_it():
    expected = [rendered("ic.Chat", ic.Chat)]
    expected += [rendered(f"Chat.{method}", getattr(ic.Chat, method)) for method in METHODS["Chat"]]
    expected += [rendered(f"ic.{name}", getattr(ic, name)) for name in FUNCTIONS]
    for cls_name, events in EVENTS.items():
        cls = getattr(ic, cls_name)
        expected += [rendered(f"{cls_name}.{event}", getattr(getattr(cls, event), "fn", getattr(cls, event)))
                     for event in events]
    assert documented() == expected
    public = set(ic.__all__) - {"SlotProps", "ToolCall"}
    assert set(FUNCTIONS) | set(METHODS) | set(EVENTS) >= public  # every public name is listed
