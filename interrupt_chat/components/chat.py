"""``chat()``: the chat page body — messages, run status, error, interrupt slot, composer."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

import reflex as rx

from ..approvals import file_rules
from ..assembly.registry import Headers, identity_key, legacy_class_name, new_chat_state
from ..assembly.state import ChatState, InterruptState
from ..model.files import Attachments
from ..tab import persistence
from ..tab.page_check import STALE_MESSAGE, PageCheck
from ..tab.tools import FrontendToolState
from .behaviour import chat_behaviour
from .composer import composer
from .declaring import check_state_args
from .history import HistoryRows, history_focus, history_more
from .history_row import history_row
from .identity_cookie import identity_cookie
from .interrupt_slot import SlotProps, default_slot, slot_container
from .message import ToolRenderers, message_row, policy_note
from .notify import notify_toggle
from .tool_wait import tool_slot

__all__ = ["chat", "chat_state", "chat_view", "run_status"]

RenderFn = Callable[[SlotProps], rx.Component]
OwnerFn = Callable[[ChatState], Any]  # -> str, or an awaitable of it

# Shipped with the package (a Reflex shared asset), so an app embedding the chat gets its styles.
STYLESHEET = rx.asset("interrupt_chat.css", shared=True)


def _legacy_key(agent_url: str | None, interrupts: Sequence[tuple[type[InterruptState], RenderFn]],
                tools: Sequence[type[FrontendToolState]], name: str | None) -> str:
    """The key chats had before 0017 (it held the URL), for moving their stored threads."""
    names = [config.get_full_name() for config, _ in interrupts] + [f"tool:{t.get_full_name()}" for t in tools]
    return "|".join([agent_url or "", *names, *([f"name:{name}"] if name else [])]) or "default"


def chat_state(agent_url: str | None = None,
               interrupts: Sequence[tuple[type[InterruptState], RenderFn]] | None = None,
               headers: Headers | None = None, owner: OwnerFn | None = None,
               tools: Sequence[type[FrontendToolState]] | None = None, name: str | None = None) -> type[ChatState]:
    """The ``ChatState`` subclass of a chat (prefer ``ic.Chat(...).state``).

    A chat is found by its ``name`` (else its interrupts and tools): ``chat_state(name="support")``
    is the state of ``chat(..., name="support")``; arguments given must match that chat's.
    """
    check_state_args(agent_url, interrupts, headers, owner, tools, name)
    interrupts, tools = list(interrupts or []), list(tools or [])
    configs = [c for c, _ in interrupts]
    legacy = legacy_class_name(_legacy_key(agent_url, interrupts, tools, name), agent_url, headers, owner)
    state = new_chat_state(identity_key(configs, tools, name), agent_url=agent_url, configs=configs, headers=headers,
                           owner=owner, tools=tools, legacy_name=legacy)
    file_rules.declare(state, None)  # INTERRUPT_CHAT_POLICY_FILE: a bad one stops the app here, before it serves
    return state


def run_status(state: type[ChatState]) -> rx.Component:
    """The status line: a dot, Ready / Working… / Waiting for you / Failed, and the current step.

    A polite live region: a screen reader says the status when it changes (once: a stream push
    that leaves the text as it was changes nothing in the DOM, so nothing is announced).
    """
    label = rx.match(state.status, ("running", "Working…"), ("interrupted", "Waiting for you"),
                     ("error", "Failed"), "Ready")
    return rx.hstack(
        rx.box(class_name="ic-dot"),
        rx.text(label, size="1", color_scheme="gray"),
        rx.cond(state.step != "", rx.text("· ", state.step, size="1", color_scheme="gray")),
        align="center", spacing="2", class_name="ic-status",
        custom_attrs={"data-testid": "run-status", "data-status": state.status, "role": "status",
                      "aria-live": "polite", "aria-atomic": "true"},
    )


def _slot(state: type[ChatState], interrupts: Sequence[tuple[type[InterruptState], RenderFn]]) -> rx.Component:
    """The first configuration holding the set renders it (S20); render_in_chat=False ones do not (S18)."""
    parts = [slot_container(config, render(SlotProps.of(config))) for config, render in interrupts]
    default = state.default_config
    assert default is not None  # new_chat_state gives every chat state its default slot
    parts.append(slot_container(default, default_slot(default)))
    return rx.fragment(*parts)


def _messages(state: type[ChatState], renderers: ToolRenderers | None = None) -> rx.Component:
    turn = state.live_state  # its own state: a push of the current turn re-renders only its rows (live.py)
    history = HistoryRows(state)  # the page's copy, fed by deltas (paging.py)
    return rx.box(
        rx.cond(
            (history.rows.length() == 0) & (turn.live.length() == 0),
            rx.center(rx.text("Ask the agent something.", color_scheme="gray", size="2"),
                      class_name="ic-empty"),
        ),
        history_more(state, history, older=True),
        rx.foreach(history.rows, lambda row: history_row(state, renderers, row)),  # each row memoised
        history_more(state, history, older=False),
        history_focus(state),
        rx.foreach(turn.live, lambda row: message_row(row, state.resync_stream, renderers, state.policy_notes, state)),
        # a rule's answer to an interrupt that names no tool call of the transcript: after the messages
        rx.foreach(state.policy_notes, lambda note: rx.cond(note["call_id"] == "", policy_note(note))),
        # the run stopped after rejections in a row (§6.4 denial limit): said where the run ended
        rx.cond(state.denial_notice != "", rx.callout(
            state.denial_notice, icon="octagon_x", color_scheme="red", size="1", high_contrast=True,
            class_name="ic-denial-limit", custom_attrs={"data-testid": "denial-limit", "role": "status"})),
        class_name="ic-messages",
        # a named region that takes the focus, so the keyboard can scroll it (it is not a live region:
        # streamed text is not announced push by push)
        custom_attrs={"data-testid": "chat-messages", "data-chat-scroll": "true", "role": "region",
                      "aria-label": "Messages", "tabIndex": "0"},
    )


def chat(agent_url: str | None = None, interrupts: Sequence[tuple[type[InterruptState], RenderFn]] | None = None,
         *, headers: Headers | None = None, owner: OwnerFn | None = None, header: rx.Component | None = None,
         footer: rx.Component | None = None, tools: Sequence[type[FrontendToolState]] | None = None,
         tool_renderers: ToolRenderers | None = None, name: str | None = None,
         notify: Callable[[dict[str, Any]], Any] | None = None, on_expiry: str | None = None,
         decide_requires_owner: bool | None = None,
         remember: Collection[str] | Callable[[str, Any], bool] | None = None,
         on_feedback: Callable[[dict[str, Any]], Any] | None = None,
         attachments: Attachments | None = None) -> rx.Component:
    """The chat page body: ``ic.Chat(...).view(header=..., footer=...)`` in one call.

    Args:
        agent_url: the AG-UI endpoint; default ``INTERRUPT_CHAT_AGENT_URL``, else the URL registered
            with ``set_default_agent_url``; with neither, the chat shows a configuration error.
        interrupts: ``(InterruptState subclass, render_fn)`` pairs, tried in order (S20). A
            ``render_fn`` gets :class:`SlotProps` and returns the slot's component.
        headers: request headers sent to the agent: a mapping (``{"Authorization": "Bearer …"}``) or
            ``fn(chat_state) -> dict`` called on the server whenever a client is made (e.g. a token
            from the app's auth state). Kept in process memory only: never in a var, a pickle, the
            thread database or a log.
        owner: whose threads these are: ``owner(chat_state) -> str`` (sync or async, called on the
            server), e.g. the user id from the app's auth state; ``None`` when nobody is signed in (the
            chat then shows ``chat-signin`` and sends, answers and lists nothing). Default: this
            browser's anonymous identity, an HttpOnly cookie the backend issues (every tab and
            restart of one browser profile shares the threads; page scripts cannot read it).
        header: optional component above the messages (e.g. suggestion chips).
        footer: optional component under the composer.
        tools: ``FrontendToolState`` subclasses: frontend tools offered to the agent on every run;
            their waiting calls show under the messages (S26-S31).
        tool_renderers: ``{tool name: render_fn}``: ``render_fn(call)`` draws that tool's calls
            (``call.status``, ``call.input`` (the arguments, once complete), ``call.output`` (a
            JSON result), ``call.result`` (its text)); other tools get the default card.
        name: the chat's identity (see ``ic.Chat``): keeps its conversation apart from another
            chat with the same interrupts and tools.
        notify: ``fn(notification)``, told when a request waits, is decided or expires (``ic.Chat``).
        on_expiry: ``"cancel"``: the backend sends a set whose last interrupt expired (``ic.Chat``).
        decide_requires_owner: decision links need the owner's own login (``ic.Chat``).
        remember: the tool approvals a person may turn into a rule: tool names or
            ``fn(tool_name, interrupt) -> bool`` (``ic.Chat``); default: every one.
        on_feedback: ``fn(feedback)``, told when the person rates an answer (``ic.Chat``).
        attachments: what the composer takes (``ic.Attachments``); default: images, PDF and plain
            text, 10 MB a file, 20 MB a message, 10 files.
    """
    from .declaration import Chat  # the declaration uses this module's parts

    return Chat(agent_url, interrupts, headers=headers, owner=owner, tools=tools, tool_renderers=tool_renderers,
                name=name, notify=notify, on_expiry=on_expiry,
                decide_requires_owner=decide_requires_owner, remember=remember,
                on_feedback=on_feedback, attachments=attachments).view(header=header, footer=footer)


def chat_view(state: type[ChatState], interrupts: Sequence[tuple[type[InterruptState], RenderFn]],
              tool_renderers: ToolRenderers | None = None, header: rx.Component | None = None,
              footer: rx.Component | None = None) -> rx.Component:
    """The chat page body of a declared chat (``Chat.view``)."""
    persistence.check_soon()  # a wrong database URL is reported at start-up, once
    return rx.box(
        rx.el.link(rel="stylesheet", href=STYLESHEET),
        chat_behaviour(),
        identity_cookie(),  # the identity cookie by HTTP too (a server may drop the socket accept's headers)
        rx.hstack(run_status(state), rx.spacer(), header or rx.fragment(), notify_toggle(), align="center",
                  width="100%", class_name="ic-toolbar"),
        _messages(state, tool_renderers),
        rx.cond(state.error != "", rx.callout(state.error, icon="triangle_alert", color_scheme="red", size="1",
                                              high_contrast=True, class_name="ic-error",
                                              custom_attrs={"data-testid": "chat-error", "role": "alert"})),
        _stale(state),
        rx.cond(state.signed_out, rx.callout("Sign in to use this chat.", icon="log_in", color_scheme="gray",
                                             size="1", high_contrast=True,
                                             custom_attrs={"data-testid": "chat-signin", "role": "status"})),
        _slot(state, interrupts),
        tool_slot(state),
        _paused(state),
        composer(state),
        footer or rx.fragment(),
        _loader(state),
        class_name="ic-chat",
        on_mount=state.on_load_chat,
        custom_attrs={"data-chat-state": state.get_full_name()},
    )


PAUSED = ("Paused: your agents are stopped and rules answer nothing. New messages are refused until you resume "
          "them on the policies page.")


def _paused(state: type[ChatState]) -> rx.Component:
    """``pause-banner`` (§6.4): while the person's pause is on, above the composer (which refuses to send)."""
    return rx.cond(state.paused, rx.callout(
        PAUSED, icon="circle_pause", color_scheme="amber", size="1", high_contrast=True, class_name="ic-pause-banner",
        custom_attrs={"data-testid": "pause-banner", "role": "status"}))


def _stale(state: type[ChatState]) -> rx.Component:
    """"Reload": the page was built for another version of the app (its chat has no state in this backend)."""
    return rx.fragment(
        rx.box(on_mount=PageCheck.check([state.get_full_name()]), display="none"),
        rx.cond(PageCheck.stale, rx.callout(
            rx.hstack(rx.text(STALE_MESSAGE), rx.button("Reload", size="1", variant="soft",
                                                        on_click=rx.call_script("window.location.reload()"),
                                                        custom_attrs={"data-testid": "chat-reload"}),
                      align="center", spacing="3"),
            icon="refresh_cw", color_scheme="amber", size="1", high_contrast=True,
            custom_attrs={"data-testid": "chat-stale", "role": "alert"})),
    )


def _loader(state: type[ChatState]) -> rx.Component:
    """Load the owner's threads whenever the backend's state has not (the chat's own mount reloads them).

    After a backend restart, even without a reload, the reconnect hydrates ``loaded = False``,
    which mounts this again. While the chat shows a run, every (re)connection (a new socket session
    id) mounts a watcher that ends the run if the worker driving it is gone (:mod:`..orphans`).
    """
    return rx.fragment(
        # keyed by the connection: a reconnect mounts it again even when the page already showed the state
        # unloaded (an ensure_loaded sent on a socket that then closed is lost; the new connection asks again)
        rx.cond(state.loaded, rx.fragment(),
                rx.box(rx.box(on_mount=state.ensure_loaded), key=rx.State.router.session.session_id, display="none")),
        rx.cond(state.status == "running",  # the key remounts the inner box (its on_mount) on every connection
                rx.box(rx.box(on_mount=state.watch_run), key=rx.State.router.session.session_id, display="none")),
    )
