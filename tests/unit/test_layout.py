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
    text = (PACKAGE / "assembly" / "state.py").read_text()
    assert len(text.splitlines()) < MAX_STATE_LINES
    classes = [n.name for n in ast.parse(text).body if isinstance(n, ast.ClassDef)]
    functions = [n.name for n in ast.parse(text).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert classes == ["InterruptState", "ChatState"] and functions == []


def test_the_top_of_the_package_holds_only_the_api_the_app_module_and_the_layers():
    files = sorted(p.name for p in PACKAGE.iterdir() if p.is_file())
    assert files == ["__init__.py", "__main__.py", "interrupt_chat.py", "py.typed"]  # (__main__: the CLI)
    layers = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert layers == ["agui", "approvals", "assembly", "components", "demo", "model", "store", "tab", "workers"]


def test_no_feature_module_names_the_assembled_state():
    """Features take the protocols of model/protocols.py; the state class is assembled on top of them."""
    offenders = []
    for layer in ("agui", "model", "store", "workers", "tab", "approvals"):
        for path in (PACKAGE / layer).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and "assembly" in (node.module or ""):
                    offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not offenders, offenders


def test_view_models_and_the_core_do_not_import_reflex():
    model = sorted(f"interrupt_chat.model.{p.stem}" for p in (PACKAGE / "model").glob("*.py") if p.stem != "__init__")
    modules = ["interrupt_chat.agui", *model, "interrupt_chat.store.threads_db", "interrupt_chat.agui.records"]
    code = f"import sys; import {', '.join(modules)}; assert 'reflex' not in sys.modules, 'reflex imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PACKAGE.parent)
