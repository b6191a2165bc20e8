"""Approvals beyond the tab: inbox, bulk, rules, decision links, server-side answers, notifications, expiry.

Above the chat: these call the chat's functions, and plug into the chat's :mod:`~interrupt_chat.tab.hooks`
(:func:`install`), which the assembled state calls.
"""


def install() -> None:
    """Plug the approvals into the chat's hooks and live sync (the assembled state calls it once)."""
    from .plug import install as plug_in  # (the package's modules build on the chat: loaded when assembled)

    plug_in()
