"""The metaclass that makes a plain subclass of a reusable Reflex state mixin a concrete state.

Reflex 0.10 binds an inherited event handler to the class that defined it, so a state meant to
be subclassed must be a mixin (``rx.State, mixin=True``). With this metaclass users write
``class Approvals(ic.InterruptState)`` and get a state of their own (docs/decisions/0003).
"""

from __future__ import annotations

from typing import Any

import reflex as rx

__all__ = ["ConcreteSubclasses"]


class ConcreteSubclasses(type(rx.State)):  # type: ignore[misc]
    """A subclass whose state bases are all mixins becomes a concrete ``rx.State``."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], mixin: bool = False,
                **kwargs: Any) -> ConcreteSubclasses:
        """Append ``rx.State`` to the bases of a non-mixin subclass of mixins only."""
        state_bases = [b for b in bases if isinstance(b, type(rx.State))]
        if not mixin and state_bases and all(b._mixin for b in state_bases):
            bases = (*bases, rx.State)
        return super().__new__(mcs, name, bases, namespace, mixin=mixin, **kwargs)
