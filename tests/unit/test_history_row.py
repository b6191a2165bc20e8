"""History rows as memoised components (issue 45): a chat var that changes redraws only the rows it concerns."""

from __future__ import annotations

import reflex as rx

import interrupt_chat as ic
from interrupt_chat.components import history_row
from interrupt_chat.components.message import message_row
from interrupt_chat.model.views import MessageRow


def _state_hooks(component: rx.Component, state: type[rx.State]) -> list[str]:
    """The hooks of ``component`` that subscribe to ``state``'s vars (the compiled page's ``useStateContext``)."""
    name = state.get_full_name().replace(".", "__")
    return [hook for hook in component._get_all_hooks() if name in hook.split("=")[0]]


def test_a_history_row_reads_only_its_props_not_the_chat_s_vars():
    state = ic.Chat("http://127.0.0.1:9/", name="memo-rows").state
    row = rx.Var("row", _var_type=MessageRow).guess_type()
    inline = rx.box(message_row(row, state.resync_stream, None, state.policy_notes, state))
    assert _state_hooks(inline, state)  # drawn from the chat's vars: any change of them redraws it
    memoised = history_row._memo_for(state, None)._definition.component
    assert _state_hooks(memoised, state) == []  # its own props only (the handlers name the state, reading nothing)
    assert "start_edit" in str(memoised) and "rate_message" in str(memoised)  # the same actions as inline


def test_one_row_component_per_chat_and_set_of_tool_renderers():
    first = ic.Chat("http://127.0.0.1:9/", name="memo-rows-a").state
    second = ic.Chat("http://127.0.0.1:9/", name="memo-rows-b").state

    def card(call):
        return rx.text(call.name)

    assert history_row._memo_for(first, None) is history_row._memo_for(first, None)
    assert history_row._memo_for(first, None) is not history_row._memo_for(second, None)
    assert history_row._memo_for(first, {"weather": card}) is not history_row._memo_for(first, None)


def test_each_chat_s_row_component_compiles_into_a_file_of_its_own():
    """A page loads its own chat's row component, not every chat's (decision 0038)."""
    from reflex_base.utils import memo_paths

    first = history_row._memo_for(ic.Chat("http://127.0.0.1:9/", name="memo-file-a").state, None)
    second = history_row._memo_for(ic.Chat("http://127.0.0.1:9/", name="memo-file-b").state, None)
    files = [memo_paths.module_to_mirrored_segments(memo._definition.source_module) for memo in (first, second)]
    assert files[0] != files[1]
    for memo, segments in zip((first, second), files, strict=True):
        # .web/app_components/interrupt_chat/components/history_row/ic_history_row_<hash>.jsx
        assert segments == ("interrupt_chat", "components", "history_row", memo._definition.python_name)
