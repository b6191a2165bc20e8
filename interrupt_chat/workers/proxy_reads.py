"""Reads behind a background task's state proxy: what a read needs, without the proxy's wrappers.

Through Reflex's ``StateProxy``, every read of a list or dict var is wrapped for change tracking,
and ``router`` proxies the root state and wraps each router var it is assembled from. A read that
only compares, or builds new values, needs none of that: it reads the state behind the proxy, and
whatever changes is assigned through the proxy, so the change is still sent (docs/decisions/0023).
"""

from __future__ import annotations

from typing import TypeVar

from ..model.protocols import StateLike

__all__ = ["behind", "tab_token"]

S = TypeVar("S")  # a Reflex state, or what a layer above types it as (model.protocols)


def behind(state: S) -> S:
    """The state behind a background task's proxy, for reads only (the state itself outside one)."""
    return getattr(state, "__wrapped__", state)


def tab_token(state: StateLike) -> str:
    """The tab's client token (about 2 % of a busy worker through the proxy, for a string that never changes)."""
    return behind(state).router.session.client_token
