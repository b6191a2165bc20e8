"""``PageScript``: page-level JavaScript run once the page has mounted.

``rx.script`` puts the script in the head through react-helmet, whose ``SideEffect`` uses
``UNSAFE_componentWillMount`` (React logs an error for it on every load in strict mode). A
``useEffect`` hook of an empty fragment runs the same code without it. Hooks are deduplicated
per page, so a script used by two components of one page runs once; each script guards itself
against a second run (a client-side navigation mounts it again).
"""

from __future__ import annotations

from typing import Any, ClassVar

import reflex as rx

__all__ = ["PageScript", "page_script"]


class PageScript(rx.Fragment):
    """An empty fragment whose hook runs :attr:`code` after the first render (subclass per script)."""

    code: ClassVar[str] = ""

    def add_imports(self) -> dict[str, Any]:
        """``useEffect`` from React."""
        return {"react": [rx.ImportVar(tag="useEffect")]}

    def add_hooks(self) -> list[str | rx.Var]:
        """The script, in an effect that runs once per mount."""
        return [f"useEffect(() => {{\n{self.code}\n}}, []);"]


def page_script(name: str, code: str) -> rx.Component:
    """A component that runs ``code`` once the page has mounted (``name``: the script's class name)."""
    cls = _classes.get(name)
    if cls is None:
        cls = _classes[name] = type(name, (PageScript,), {"code": code, "__module__": __name__})
    return cls.create()


_classes: dict[str, type[PageScript]] = {}
