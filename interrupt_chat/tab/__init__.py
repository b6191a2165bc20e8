"""The chat: what one tab does (send, answer, stream, page, route, tools, threads, branches, files, feedback).

Feature modules hold the Reflex handler mixins and the functions behind them; the state class is
assembled from them above (:mod:`interrupt_chat.assembly`); they type it with the protocols of
:mod:`interrupt_chat.model.protocols`.
What the chat tells the approvals beyond the tab (a set waits, decisions were made) goes through
:mod:`.hooks`; live sync reaches a tab through the follower the approvals register.
"""
