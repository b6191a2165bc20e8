"""``ic.Chat``: one chat, declared once, and everything that shows it.

.. code-block:: python

    support = ic.Chat(agent_url=URL, interrupts=[(Approvals, approval_slot)], name="support")
    support.view()          # the chat page body
    support.thread_list()   # its threads
    support.inbox()         # what waits for its owner, drawn by its own slots
    support.audit_trail()   # the shown thread's decisions
    support.policy_list()   # the owner's rules, with their revoke
    support.insights()      # charts of the decisions: time to decide, waiting, outcomes, by tool
    support.state           # its ChatState class: vars and event handlers (support.state.send_text(...))

A declaration is a plain object: build it at import time, next to the pages that use it. Its
state's identity is its ``name`` (else its interrupts and tools), never its agent URL.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from typing import Any

import reflex as rx

from ..approvals import file_rules
from ..assembly.registry import Headers
from ..assembly.state import ChatState, InterruptState
from ..model.files import Attachments
from ..model.people import People, Request
from ..model.policies import RememberFn
from ..model.policy_file import Risk
from ..tab.tools import FrontendToolState
from .chat import OwnerFn, RenderFn, chat_state, chat_view
from .declaring import check_chat, check_state_args
from .inbox import approvals_inbox
from .insights import insights
from .message import ToolRenderers
from .policies import policy_list
from .threads import audit_trail, thread_list

__all__ = ["Chat"]

NotifyFn = Callable[[dict[str, Any]], Any]
Remember = Collection[str] | RememberFn


def _option(state: type[ChatState], attribute: str, value: Any) -> None:
    """A chat option given by this declaration; another declaration of the chat may not change it."""
    if value is None:
        return
    current = getattr(state, attribute)
    if current not in (None, "", False) and current != value:
        raise ValueError(f"the chat {state.identity.removeprefix('name:')!r} is already declared with another "
                         f"{attribute.removesuffix('_fn')}: declare it once (ic.Chat(...)) and reuse it")
    setattr(state, attribute, value)


class Chat:
    """A chat: its agent, interrupt slots, tools, headers and owner, given once.

    Args:
        agent_url: the AG-UI endpoint; default ``INTERRUPT_CHAT_AGENT_URL``, else the URL
            registered with ``set_default_agent_url``.
        interrupts: ``(InterruptState subclass, render_fn)`` pairs, tried in order (S20).
        headers: a mapping, or ``fn(chat_state) -> dict`` called on the server for each run.
        owner: ``owner(chat_state) -> str`` (sync or async): whose threads these are.
        tools: ``FrontendToolState`` subclasses offered to the agent on every run.
        tool_renderers: ``{tool name: render_fn(call)}`` for tool calls in the messages.
        name: the chat's identity (its state's name and its threads' key); default: its
            interrupts and tools, or ``"default"``.
        notify: ``fn(notification)`` (sync or async): told when a request waits, is decided or
            expires (docs/guides/approvals-outside-the-chat.md).
        on_expiry: ``"cancel"``: when a set's last open interrupt expires, the backend sends it,
            the expired ones as ``cancelled`` (S11), even with no tab open.
        decide_requires_owner: decision links work only in a browser where the chat's ``owner``
            function names the thread's owner (the app's login).
        remember: which tool approvals a person may turn into a rule ("always allow", …): a
            collection of tool names, or ``fn(tool_name, interrupt) -> bool``. Default: every one.
        on_feedback: ``fn(feedback)`` (sync or async), told when the person rates an answer:
            ``{owner, thread_id, message_id, rating ("up", "down" or None when taken back), comment}``.
        attachments: what the composer takes (``ic.Attachments``: types, sizes, count, file hosting);
            default: images, PDF and plain text, 10 MB a file, 20 MB a message, 10 files.
        people: ``ic.People``: who the app's people are and who must decide each request
            (docs/guides/people.md). Needs ``owner=`` (people are named by its ids).
        policy_file: a YAML file of rules checked before a person's (docs/guides/rules.md); default
            ``INTERRUPT_CHAT_POLICY_FILE``. Read now: a malformed file raises ``ic.PolicyFileError``.
        risk: ``fn(request) -> ic.Risk | None``: the risk shown on a card no file rule rates.
        denial_limit: rejections in a row in one thread after which the run is stopped (default 3; 0: none).
        insights_admin: ``fn(chat_state) -> bool`` (sync or async): this tab's person sees everyone's
            requests on ``insights()``, not only those they asked or decided.
    """

    def __init__(self, agent_url: str | None = None,
                 interrupts: Sequence[tuple[type[InterruptState], RenderFn]] | None = None, *,
                 headers: Headers | None = None, owner: OwnerFn | None = None,
                 tools: Sequence[type[FrontendToolState]] | None = None,
                 tool_renderers: ToolRenderers | None = None, name: str | None = None,
                 notify: NotifyFn | None = None, on_expiry: str | None = None,
                 decide_requires_owner: bool | None = None, remember: Remember | None = None,
                 on_feedback: NotifyFn | None = None, attachments: Attachments | None = None,
                 people: People | None = None, policy_file: str | os.PathLike[str] | None = None,
                 risk: Callable[[Request], Risk | None] | None = None, denial_limit: int | None = None,
                 insights_admin: Callable[[ChatState], Any] | None = None) -> None:
        """Declare the chat: its state class is made (or found, for the same identity) here."""
        if on_expiry not in (None, "", "cancel"):
            raise ValueError(f"on_expiry must be None or 'cancel', not {on_expiry!r}")
        check_chat(tool_renderers=tool_renderers, notify=notify, decide_requires_owner=decide_requires_owner,
                   remember=remember, on_feedback=on_feedback, attachments=attachments)
        check_state_args(agent_url, interrupts, headers, owner, tools, name)
        if people is not None and not isinstance(people, People):
            raise TypeError(f"people must be an ic.People(...), not {type(people).__name__}")
        if people is not None and owner is None:
            raise ValueError("people=... names people by the owner= function's ids: give owner= too")
        if risk is not None and not callable(risk):
            raise TypeError("risk must be a function: fn(request) -> ic.Risk | None")
        if insights_admin is not None and not callable(insights_admin):
            raise TypeError("insights_admin must be a function: fn(chat_state) -> bool")
        if denial_limit is not None and (isinstance(denial_limit, bool) or not isinstance(denial_limit, int)
                                         or denial_limit < 0):
            raise ValueError(f"denial_limit must be a whole number >= 0, not {denial_limit!r}")
        self.interrupts = list(interrupts or [])
        self.tool_renderers = dict(tool_renderers or {})
        self.name = name
        self.state: type[ChatState] = chat_state(agent_url, self.interrupts, headers, owner, tools, name)
        _option(self.state, "notify_fn", notify)
        _option(self.state, "on_expiry", on_expiry)
        _option(self.state, "decide_requires_owner", decide_requires_owner)
        _option(self.state, "remember", remember)
        _option(self.state, "on_feedback_fn", on_feedback)
        _option(self.state, "attachment_limits", attachments)
        _option(self.state, "people", people)
        _option(self.state, "risk_fn", risk)
        _option(self.state, "denial_limit", denial_limit)
        _option(self.state, "insights_admin_fn", insights_admin)
        file_rules.declare(self.state, policy_file)  # a bad policy file stops the app here, before it serves
        # the inbox draws a set with the slot that takes it in the chat (S20), wherever it is built
        self.state.renderers = {**self.state.renderers,
                                **{config.get_full_name(): render for config, render in self.interrupts}}

    def view(self, *, header: rx.Component | None = None, footer: rx.Component | None = None) -> rx.Component:
        """The chat page body: status, messages, the interrupt slot, waiting tool calls, the composer."""
        return chat_view(self.state, self.interrupts, self.tool_renderers or None, header, footer)

    def thread_list(self) -> rx.Component:
        """New chat, a search box and the owner's threads of this chat."""
        return thread_list(self.state)

    def audit_trail(self) -> rx.Component:
        """The shown thread's decisions, oldest first."""
        return audit_trail(self.state)

    def inbox(self, chat_path: str = "/", also: Sequence[tuple[Chat | type[ChatState], str]] = ()) -> rx.Component:
        """Everything waiting for this chat's owner, across threads (``also``: more chats and their pages)."""
        return approvals_inbox(self.state, chat_path, also)

    def policy_list(self) -> rx.Component:
        """The owner's rules ("always allow", …), each with its revoke."""
        return policy_list(self.state)

    def insights(self) -> rx.Component:
        """Charts of the decisions (time to decide, waiting, outcomes, by tool) and a period select (§6.5)."""
        return insights(self.state)

    def __repr__(self) -> str:
        """The chat's name and its state class."""
        return f"Chat(name={self.name!r}, state={self.state.__name__})"
