"""The package's shape: small functions, a thin state module, framework-free view models."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "interrupt_chat"
MAX_FUNCTION_LINES = 60
MAX_STATE_LINES = 250


def _functions():
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                yield path.relative_to(PACKAGE.parent), node.name, node.end_lineno - first + 1


def test_no_function_in_the_package_is_longer_than_60_lines():
    long = [f"{path}:{name} ({lines} lines)" for path, name, lines in _functions() if lines > MAX_FUNCTION_LINES]
    assert not long, long


def test_state_module_holds_only_the_two_states():
    text = (PACKAGE / "state.py").read_text()
    assert len(text.splitlines()) < MAX_STATE_LINES
    classes = [n.name for n in ast.parse(text).body if isinstance(n, ast.ClassDef)]
    functions = [n.name for n in ast.parse(text).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert classes == ["InterruptState", "ChatState"] and functions == []


def test_view_models_and_the_core_do_not_import_reflex():
    modules = ["interrupt_chat.agui", "interrupt_chat.model.views", "interrupt_chat.model.cards",
               "interrupt_chat.model.forms",
               "interrupt_chat.store.threads_db", "interrupt_chat.agui.records"]
    code = f"import sys; import {', '.join(modules)}; assert 'reflex' not in sys.modules, 'reflex imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PACKAGE.parent)
