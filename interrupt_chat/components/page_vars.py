"""Vars computed in the page from other Vars (JavaScript expressions), for the card's widgets."""

from __future__ import annotations

from typing import Any

from reflex.vars.base import Var, VarData

__all__ = ["js_var"]


def js_var(expr: str, var_type: Any, *deps: Any) -> Var:
    """A Var computed in the page from other Vars (their states are its dependencies)."""
    return Var(_js_expr=expr, _var_type=var_type,
               _var_data=VarData.merge(*[d._get_all_var_data() for d in deps])).to(var_type)
