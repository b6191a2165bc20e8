"""The typed shapes through which the layers see the chat's Reflex states (docs/decisions/0024).

No feature module imports the assembled ``ChatState`` or ``InterruptState``
(:mod:`interrupt_chat.assembly.state`): those are built from the features' mixins, at the top. A
feature takes these protocols instead, declared here, below every layer that uses them: live sync
(``workers``) reads a tab's owner and thread, the tab's features and the approvals read and write
the rest. mypy checks that the assembled classes satisfy them wherever they are handed in.

:class:`StateLike` is what the features use of any Reflex state; :class:`ChatLike` a chat's state
(its vars, its configuration, its helpers); :class:`SlotLike` an interrupt configuration. Event
handlers appear as read-only attributes of type ``Any``: a feature returns or chains them, never
calls them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from ..agui import AgentClient, AgentSession
    from .cards import Card
    from .history import HistoryDelta, HistoryFeed
    from .views import AttachmentRow, InboxSet, InboxToolRow, ToolWaitRow

__all__ = ["JSON", "ChatLike", "SlotLike", "StateLike"]

JSON = dict[str, Any] | list | str | int | float | bool | None


class StateLike(Protocol):
    """What the features use of any Reflex state (``rx.State``)."""

    router: Any
    dirty_vars: set[str]

    async def get_state(self, state_cls: Any) -> Any: ...  # noqa: D102 (Reflex's is bound to its own states)
    async def __aenter__(self) -> Any: ...  # noqa: D105
    def reset(self) -> None: ...  # noqa: D102
    def _get_state_from_cache(self, state_cls: Any) -> Any: ...
    async def __aexit__(self, *exc: object) -> None: ...  # noqa: D105
    @classmethod
    def get_full_name(cls) -> str: ...  # noqa: D102
    @classmethod
    def get_name(cls) -> str: ...  # noqa: D102


class ChatLike(StateLike, Protocol):
    """A chat's state as the features see it: its vars, its configuration (class-level) and its helpers."""

    _frozen: dict[str, int]
    _held: dict[str, int]
    _history_feed: HistoryFeed | None
    _inbox_listed: dict[str, Card]
    _inbox_runs: dict[str, str]
    _inbox_foreign: dict[str, str]
    _inbox_shown: bool
    _owner_key: str
    _policies_shown: bool
    _resync: bool
    _sessions: dict[str, AgentSession]
    _summaries: list[Any]  # the store's ThreadSummary rows (views.Summary)
    _titles: dict[str, str]
    agent_state: dict[str, Any]
    agent_url: ClassVar[Any]
    @property
    def attach_files(self) -> Any: ...  # noqa: D102 (an event handler)
    attachment_limits: ClassVar[Any]
    attachments: list[AttachmentRow]
    branch_nav: dict[str, str]
    @property
    def cancel_edit(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def comment_message(self) -> Any: ...  # noqa: D102 (an event handler)
    composer_error: str
    configs: ClassVar[Any]
    @property
    def copy_message(self) -> Any: ...  # noqa: D102 (an event handler)
    decide_requires_owner: ClassVar[Any]
    denial_limit: ClassVar[Any]
    denial_notice: str
    decisions: list[dict[str, str]]
    default_config: ClassVar[Any]
    @property
    def delegate_clear(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def delegate_save(self) -> Any: ...  # noqa: D102 (an event handler)
    delegation: dict[str, str]
    @property
    def delete_thread(self) -> Any: ...  # noqa: D102 (an event handler)
    editing_id: str
    @property
    def ensure_loaded(self) -> Any: ...  # noqa: D102 (an event handler)
    error: str
    @property
    def export_thread(self) -> Any: ...  # noqa: D102 (an event handler)
    feedback: dict[str, str]
    feedback_comments: dict[str, str]
    following: bool
    headers: ClassVar[Any]
    history: HistoryDelta[Any]
    @property
    def history_newer(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def history_older(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def history_resync(self) -> Any: ...  # noqa: D102 (an event handler)
    identity: ClassVar[Any]
    inbox: list[Card]
    @property
    def inbox_approve_edited(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def inbox_arrange(self) -> Any: ...  # noqa: D102 (an event handler)
    inbox_bulk: dict[str, Any]
    @property
    def inbox_bulk_ask(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def inbox_bulk_close(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def inbox_bulk_run(self) -> Any: ...  # noqa: D102 (an event handler)
    inbox_bulk_verb: str
    @property
    def inbox_cancel(self) -> Any: ...  # noqa: D102 (an event handler)
    inbox_count: int
    inbox_loaded: bool
    inbox_page: int
    @property
    def inbox_page_next(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def inbox_page_prev(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def inbox_reassign(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def inbox_reassign_open(self) -> Any: ...  # noqa: D102 (an event handler)
    inbox_reason: str
    inbox_reasons: list[str]
    @property
    def inbox_remember(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def inbox_resolve(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def inbox_select_all(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def inbox_save_rule(self) -> Any: ...  # noqa: D102 (an event handler)
    inbox_scope: str
    inbox_selectable: list[str]
    inbox_selected: list[str]
    inbox_sets: list[InboxSet]
    inbox_sort: str
    @property
    def inbox_set_scope(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def inbox_submit_form(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def inbox_toggle(self) -> Any: ...  # noqa: D102 (an event handler)
    inbox_tool: str
    inbox_tool_names: list[str]
    inbox_tools: list[InboxToolRow]
    inbox_total: int
    legacy_names: ClassVar[Any]
    live_state: ClassVar[Any]
    @property
    def load_count(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def load_inbox(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def load_policies(self) -> Any: ...  # noqa: D102 (an event handler)
    loaded: bool
    locked: bool
    @property
    def new_thread(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def next_branch(self) -> Any: ...  # noqa: D102 (an event handler)
    notice: str
    notify_fn: ClassVar[Any]
    on_expiry: ClassVar[Any]
    on_feedback_fn: ClassVar[Any]
    @property
    def on_load_chat(self) -> Any: ...  # noqa: D102 (an event handler)
    owner_fn: ClassVar[Any]
    people_choices: list[dict[str, str]]
    people_on: bool
    paused: bool
    policies: list[dict[str, str]]
    policies_loaded: bool
    policy_file: ClassVar[Any]
    @property
    def policy_notes(self) -> list[dict[str, str]]: ...  # noqa: D102 (a computed var)
    @property
    def previous_branch(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def rate_message(self) -> Any: ...  # noqa: D102 (an event handler)
    reassign_open: str
    @property
    def refuse_dropped(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def regenerate(self) -> Any: ...  # noqa: D102 (an event handler)
    regenerate_id: str
    remember: ClassVar[Any]
    @property
    def remove_attachment(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def rename_thread(self) -> Any: ...  # noqa: D102 (an event handler)
    risk_fn: ClassVar[Any]
    renderers: ClassVar[Any]
    @property
    def resync_stream(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def revoke_policy(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def route_interrupts(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def save_edit(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def search_threads(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def send(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def send_text(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def set_agent_state(self) -> Any: ...  # noqa: D102 (an event handler)
    shown_here: str
    signed_out: bool
    @property
    def start_edit(self) -> Any: ...  # noqa: D102 (an event handler)
    status: str
    step: str
    @property
    def stop(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def switch_thread(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def toggle_pause(self) -> Any: ...  # noqa: D102 (an event handler)
    thread_id: str
    thread_query: str
    threads: list[dict[str, str]]
    tool_states: ClassVar[Any]
    tool_waits: list[ToolWaitRow]
    @property
    def watch_run(self) -> Any: ...  # noqa: D102 (an event handler)

    def _client(self) -> AgentClient: ...
    async def _history_more(self, index: Any, *, older: bool) -> None: ...
    def _new_session(self) -> AgentSession: ...
    async def _send_text(self, text: Any) -> None: ...
    def _session(self) -> AgentSession: ...
    async def agent_headers(self) -> dict[str, str]: ...  # noqa: D102
    def owner(self) -> str: ...  # noqa: D102


class SlotLike(StateLike, Protocol):
    """An interrupt configuration's state (``InterruptState``) as the features see it."""

    _chat_state: ClassVar[Any]
    active: bool
    @property
    def approve_edited(self) -> Any: ...  # noqa: D102 (an event handler)
    @property
    def cancel(self) -> Any: ...  # noqa: D102 (an event handler)
    cards: list[Card]
    event: dict[str, Any] | None
    @property
    def has_interrupt(self) -> bool: ...  # noqa: D102 (a computed var)
    interrupt: dict[str, Any] | None
    interrupts: list[dict[str, Any]]
    @property
    def remember_rule(self) -> Any: ...  # noqa: D102 (an event handler)
    render_in_chat: bool
    @property
    def resolve(self) -> Any: ...  # noqa: D102 (an event handler)
    result: JSON
    slot_props: dict[str, Any] | None
    @property
    def submit_form(self) -> Any: ...  # noqa: D102 (an event handler)
    submitting: bool

    @classmethod
    def _chat(cls) -> type[ChatLike]: ...
    def enabled(self, event: dict[str, Any]) -> bool: ...  # noqa: D102
    async def handler(self, props: dict[str, Any]) -> Any: ...  # noqa: D102
