"""The docs site (mkdocs.yml, docs/) and the README cannot drift from the code.

- The API reference is generated from the docstrings (``::: interrupt_chat.<Name>``, mkdocstrings): every name
  in ``interrupt_chat.__all__`` has its directive, and no other name.
- Every ```python block of the README and of docs/ (included files expanded, as pymdownx.snippets does)
  compiles; every ``ic.<name>`` it uses is public, and every call of ``ic.<Name>(...)``, of a method of a
  chat it declares (``support.inbox(...)``) or of its state's events (``support.state.send_text(...)``)
  binds to the real signature.
- Paths that blocks and the written pages name under scripts/, examples/, benchmarks/, tests/ and docs/
  exist; the written pages (README, home, guides, reference) name no module inside the package, which may
  move: only the public API.
- Every decision page is in the decisions index. The webhook receiver the docs show accepts what the
  documented signature scheme signs, and nothing else.

``mkdocs build --strict`` itself (links, anchors, included files, the reference's rendering) runs in
scripts/test.sh.
"""

from __future__ import annotations

import ast
import hashlib
import hmac
import inspect
import json
import re
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import interrupt_chat as ic
from examples import webhook_receiver

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = sorted(DOCS.rglob("*.md"))
#: The pages written for this site and the README: public API only, paths that exist. (semantics.md,
#: dom-contract.md, accessibility.md and the decisions are kept as they were: they name internals on purpose.)
WRITTEN = [README, DOCS / "index.md", DOCS / "reference.md", *sorted((DOCS / "guides").glob("*.md"))]
FOLDERS = ("scripts", "examples", "benchmarks", "tests", "docs")

_SNIPPET = re.compile(r'^(?P<indent>[ \t]*)--8<-- "(?P<path>[^"]+?)(?::(?P<section>[\w-]+))?"[ \t]*$', re.M)
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<lang>[\w+-]*)[^\n]*\n"
                    r"(?P<body>.*?)^[ \t]*(?P=fence)[ \t]*$", re.M | re.S)
_PATH = re.compile(rf"(?<![\w./~-])(?:{'|'.join(FOLDERS)})/[\w./-]*")
_INTERNAL_PATH = re.compile(r"(?<![\w./~-])interrupt_chat/\w")
_DOTTED = re.compile(r"(?<![\w./-])(?:interrupt_chat|ic)\.(\w+)")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def _section(text: str, name: str) -> str:
    start = re.search(rf"^.*--8<-- \[start:{re.escape(name)}\].*\n", text, re.M)
    end = re.search(rf"^.*--8<-- \[end:{re.escape(name)}\].*$", text, re.M)
    assert start and end, f"no section {name!r}"
    return text[start.end():end.start()]


def expand(text: str) -> str:
    """The page as mkdocs reads it: each ``--8<-- "path[:section]"`` line replaced by what it includes."""
    def include(m: re.Match[str]) -> str:
        included = (ROOT / m.group("path")).read_text()
        if m.group("section"):
            included = _section(included, m.group("section"))
        return textwrap.indent(included.rstrip("\n"), m.group("indent"))
    return _SNIPPET.sub(include, text)


def blocks(path: Path) -> list[tuple[str, str, int]]:
    """(language, code, line) of each fenced block of the page, includes expanded (``line`` in the source)."""
    source = path.read_text()
    found = []
    for m in _FENCE.finditer(source):
        body = textwrap.dedent(expand(textwrap.dedent(m.group("body"))))
        found.append((m.group("lang").lower(), body, source.count("\n", 0, m.start()) + 1))
    return found


def python_blocks() -> list[Any]:
    return [pytest.param(code, id=f"{path.relative_to(ROOT)}:{line}")
            for path in [README, *PAGES] for lang, code, line in blocks(path) if lang in ("python", "py")]


def _dotted(node: ast.AST) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"]; None for anything that is not names and attributes."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _resolve(parts: list[str]) -> tuple[Any, Any]:
    """The object ``parts`` names (``ic.X.y``, ``support.view``, ``support.state.stop``) and the class it was
    read from (None for a module's name). Raises AttributeError naming what is missing."""
    head, *rest = parts
    if head == "ic":
        if not rest:
            return ic, None
        if rest[0] not in ic.__all__:
            raise AttributeError(f"ic.{rest[0]} is not public (interrupt_chat.__all__)")
        obj, owner, rest = getattr(ic, rest[0]), None, rest[1:]
    else:  # a name bound to ic.Chat(...): its attributes are ic.Chat's
        obj, owner = ic.Chat, None
        if rest[:1] == ["state"]:  # support.state is the chat's ChatState subclass
            obj, rest = ic.ChatState, rest[1:]
    for name in rest:
        if not hasattr(obj, name):
            raise AttributeError(f"{'.'.join(parts)}: {getattr(obj, '__name__', obj)} has no {name!r}")
        obj, owner = getattr(obj, name), obj
        owner = owner if inspect.isclass(owner) and inspect.isfunction(inspect.getattr_static(owner, name)) else None
    return obj, owner


def _signature(obj: Any, owner: Any) -> tuple[inspect.Signature, int]:
    """The signature to bind and how many leading placeholders stand for ``self``: a method read from a class
    (``support.view``; a state's event handler, ``support.state.send_text``, bound as Reflex binds it)."""
    function = getattr(obj, "fn", None)  # a Reflex event handler: its function, with self
    if function is not None and callable(function):
        return inspect.signature(function), 1
    return inspect.signature(obj), 1 if owner is not None else 0


def check_python(code: str, where: str) -> list[str]:
    """What is wrong with a block: names of the public API that do not exist, calls that do not bind."""
    tree = ast.parse(code, where)
    compile(tree, where, "exec")
    chats = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
             and isinstance(node.value, ast.Call) and _dotted(node.value.func) == ["ic", "Chat"]
             for target in node.targets if isinstance(target, ast.Name)}
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts = _dotted(node)
            if parts and (parts[0] == "ic" or parts[0] in chats):
                try:
                    _resolve(parts)
                except AttributeError as exc:
                    problems.append(f"line {node.lineno}: {exc}")
        if isinstance(node, ast.Call):
            parts = _dotted(node.func)
            if not parts or not (parts[0] == "ic" or parts[0] in chats) or len(parts) < 2:
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                continue  # *args / **kwargs: nothing to bind by hand
            try:
                target, owner = _resolve(parts)
                signature, selves = _signature(target, owner)
            except (AttributeError, TypeError, ValueError):
                continue  # reported above, or not a callable with a signature
            placeholders = [object()] * (selves + len(node.args))
            try:
                signature.bind(*placeholders, **{k.arg: object() for k in node.keywords if k.arg})
            except TypeError as exc:
                problems.append(f"line {node.lineno}: {'.'.join(parts)}(...) does not fit {signature}: {exc}")
    return problems


@pytest.mark.parametrize("code", python_blocks())
def test_every_python_block_compiles_and_calls_the_public_api_as_it_is(code: str, request: pytest.FixtureRequest):
    assert check_python(code, request.node.callspec.id) == []


def test_the_checker_catches_what_it_is_for():
    assert check_python("ic.Chat(agent_url='x', nme='support')", "t")  # a misspelled keyword
    assert check_python("ic.Chats()", "t")  # no such name
    assert check_python("ic.annotations", "t")  # a module attribute, not the public API
    assert check_python("support = ic.Chat()\nsupport.inbox(chat_pat='/')", "t")  # a chat's method
    assert check_python("support = ic.Chat()\nsupport.state.send_text('a', 'b')", "t")  # an event handler
    assert check_python("support = ic.Chat()\nsupport.state.sendtext('a')", "t")
    assert check_python("ic.tune_gc(1, 2)", "t")
    assert not check_python("support = ic.Chat(name='s')\nsupport.state.send_text('Hi')\nsupport.view(header=None)\n"
                            "ic.tune_gc()\nclass A(ic.InterruptState):\n    enabled = ic.for_reasons('tool_call')", "t")
    with pytest.raises(SyntaxError):
        check_python("def broken(:\n", "t")


def test_the_python_blocks_include_the_example_files():
    codes = [param.values[0] for param in python_blocks()]
    app = (ROOT / "examples" / "embedded_app" / "embedded_app" / "embedded_app.py").read_text()
    assert any(code == app for code in codes)  # the embedding guide's, expanded as mkdocs expands it


def test_the_reference_documents_every_public_name_once():
    directives = [m.group(1) for page in PAGES
                  for m in re.finditer(r"^:::[ \t]+interrupt_chat\.(\S+)[ \t]*$", page.read_text(), re.M)]
    assert sorted(directives) == sorted([*ic.__all__, "agui"]), "::: directives against interrupt_chat.__all__"
    assert len(set(directives)) == len(directives)


def test_the_protocol_core_page_renders_the_whole_core_api():
    """``::: interrupt_chat.agui`` renders the package's public names: its ``__all__`` (the contract's section 1)."""
    from interrupt_chat import agui

    page = (DOCS / "reference-core.md").read_text()
    assert re.search(r"^::: interrupt_chat\.agui$", page, re.M) and "show_submodules: false" in page
    assert {"InterruptTracker", "Decision", "AgentSession", "Transcript", "AgentClient"} <= set(agui.__all__)


def test_paths_the_docs_name_exist():
    missing = []
    for path in [README, *PAGES]:
        texts = [code for lang, code, _ in blocks(path) if lang not in ("python", "py")]
        if path in WRITTEN:
            texts += _CODE_SPAN.findall(_FENCE.sub("", path.read_text()))
        for text in texts:
            for name in _PATH.findall(text):
                name = name.rstrip(".")
                if not (ROOT / name).exists():
                    missing.append(f"{path.relative_to(ROOT)}: {name}")
    assert not missing, "paths named in the docs that do not exist:\n" + "\n".join(missing)


def test_the_readme_names_scripts_that_exist():
    named = {name for _, code, _ in blocks(README) for name in re.findall(r"scripts/[\w./-]+", code)}
    assert "scripts/test.sh" in named and all((ROOT / name).exists() for name in named)


def test_the_readme_test_command_is_the_one_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^exec scripts/test\.sh\b", ci, re.M)
    assert any(re.search(r"^scripts/test\.sh\b", code, re.M) for lang, code, _ in blocks(README) if lang == "bash")


def test_the_written_pages_name_only_the_public_api():
    found = []
    for path in WRITTEN:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{number}"
            found += [f"{where}: {m.group(0)}" for m in _INTERNAL_PATH.finditer(line)]
            found += [f"{where}: {m.group(0)}" for m in _DOTTED.finditer(line) if m.group(1) not in ic.__all__]
    assert not found, "modules inside the package (they may move): name the public API instead\n" + "\n".join(found)


def test_every_decision_is_in_the_index_and_the_nav():
    index = (DOCS / "decisions" / "README.md").read_text()
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in sorted((DOCS / "decisions").glob("0*.md")):
        assert f"]({page.name})" in index, f"docs/decisions/README.md does not list {page.name}"
        assert f"decisions/{page.name}" in nav, f"mkdocs.yml's nav lacks {page.name}"


def _signed(secret: str, body: bytes, at: float) -> dict[str, str]:
    """Headers signed the way the docs say the sender signs (HMAC-SHA256 of "<timestamp>.<body>")."""
    timestamp = str(int(at))
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return {"X-Interrupt-Chat-Timestamp": timestamp, "X-Interrupt-Chat-Signature": f"sha256={digest}"}


def test_the_documented_webhook_receiver_accepts_signed_first_deliveries_only():
    webhook_receiver.seen.clear()
    body = json.dumps({"id": "n-1", "event": "pending", "decide_url": "https://app.example/decide/t"}).encode()
    headers = _signed("s3cret", body, time.time())
    assert webhook_receiver.receive("s3cret", headers, body) == json.loads(body)
    assert webhook_receiver.receive("s3cret", headers, body) is None  # delivered again: dropped
    other = json.dumps({"id": "n-2", "event": "decided"}).encode()
    assert webhook_receiver.receive("other", _signed("s3cret", other, time.time()), other) is None  # wrong secret
    assert webhook_receiver.receive("s3cret", _signed("s3cret", other, time.time()), other + b" ") is None  # altered
    assert webhook_receiver.receive("s3cret", _signed("s3cret", other, time.time() - 3600), other) is None  # stale
    assert webhook_receiver.receive("s3cret", {}, other) is None  # unsigned
    assert not webhook_receiver.verify("s3cret", "not a time", other, "sha256=00")
    assert webhook_receiver.receive("s3cret", _signed("s3cret", other, time.time()), other)["event"] == "decided"
