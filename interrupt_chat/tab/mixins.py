"""The metaclass behind ``InterruptState`` and ``ChatState``: a plain subclass is a state of its own.

Reflex 0.10 binds an inherited event handler, and an inherited field, to the state class that
declared it; a state meant to be subclassed must therefore be a mixin (``mixin=True``). This
metaclass lets users write ``class Approvals(ic.InterruptState)`` and get a concrete state
(docs/decisions/0003). Subclassing such a configuration (``class Strict(Approvals)``) builds
``Strict`` on a mixin copy of ``Approvals``' class body, so ``Strict`` gets its own vars and its
own ``resolve`` / ``cancel`` instead of sharing ``Approvals``' (zero-argument ``super()`` in the
copied methods refers to the copy).

The configuration hooks ``enabled`` and ``handler`` are methods the library calls, never event
handlers that a browser could call.
"""

from __future__ import annotations

from types import CellType, FunctionType
from typing import Any, cast

import reflex as rx
from reflex_base.vars.base import BaseStateMeta

__all__ = ["HOOKS", "ConcreteSubclasses"]

HOOKS = ("enabled", "handler", "agent_headers", "owner", "result")  # called by the library, never from a browser

_SOURCES: dict[type, tuple[tuple[type, ...], dict[str, Any]]] = {}  # concrete class -> (mixin bases, body)
_BODIES: dict[type, type] = {}  # concrete class -> its class body as a mixin (made when first subclassed)


class ConcreteSubclasses(BaseStateMeta):
    """A non-mixin subclass of mixins (or of such subclasses) becomes a concrete ``rx.State``."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], mixin: bool = False,
                **kwargs: Any) -> ConcreteSubclasses:
        """Create the class; a subclass of mixins only gets ``rx.State`` as its last base."""
        for hook in HOOKS:
            if isinstance(namespace.get(hook), FunctionType):
                namespace[hook].__override_base_method__ = True  # Reflex: a plain method, not an event handler
        bases = tuple(_body(base) if base in _SOURCES else base for base in bases)
        state_bases = [b for b in bases if isinstance(b, BaseStateMeta)]
        if mixin or not state_bases or not all(b._mixin for b in state_bases):
            return cast(ConcreteSubclasses, super().__new__(mcs, name, bases, namespace, mixin=mixin, **kwargs))
        source = {key: value for key, value in namespace.items() if key != "__classcell__"}
        # BaseStateMeta.__new__ is annotated ``-> type``; it returns an instance of ``mcs``
        cls = cast(ConcreteSubclasses, super().__new__(mcs, name, (*bases, rx.State), namespace, mixin=False, **kwargs))
        _SOURCES[cls] = (bases, source)
        return cls


def _body(cls: type) -> type:
    """``cls``'s class body as a mixin, for subclasses of the concrete ``cls`` to build on."""
    body = _BODIES.get(cls)
    if body is None:
        bases, source = _SOURCES[cls]
        body = ConcreteSubclasses(cls.__name__, bases, dict(source), mixin=True)
        for key, value in source.items():
            if isinstance(value, FunctionType) and "__class__" in value.__code__.co_freevars:
                setattr(body, key, _rebound(value, body))
        _BODIES[cls] = body
    return body


def _rebound(fn: FunctionType, owner: type) -> FunctionType:
    """A copy of ``fn`` whose ``__class__`` cell (zero-argument ``super()``) names ``owner``."""
    cells = tuple(CellType(owner) if var == "__class__" else cell
                  for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True))
    copy = FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, cells)
    copy.__kwdefaults__, copy.__annotations__ = fn.__kwdefaults__, fn.__annotations__
    copy.__qualname__ = fn.__qualname__
    copy.__dict__.update(fn.__dict__)
    return copy
