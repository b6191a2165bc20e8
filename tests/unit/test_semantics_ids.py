"""Rule ids: every S-id cited in the repository is defined in docs/semantics.md, and nothing points outside it.

A rule is *defined* by a line of docs/semantics.md that opens with its id in bold, as a list item
(``- **S7 — Answers accumulate; one resume.** ...``) or as a heading (``### S7 — ...``). A rule is
*cited* by ``S7`` / ``S07`` as a word of its own (so ``RS256``, ``US1``, ``CSS3`` or ``S3Client`` are not
citations), by a range ``S1-S15`` / ``S16–S20`` (hyphen or en dash; every id inside must be defined), or
in lowercase as one underscore-separated part of a test name (``test_s07_...``,
``test_langgraph_std_approval_s02_s12``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEMANTICS = ROOT / "docs" / "semantics.md"

#: Folders whose code and docs are scanned for citations (plus files at the top level).
SCANNED_DIRS = ("interrupt_chat", "tests", "benchmarks", "examples", "scripts", "docs")
SCANNED_SUFFIXES = (".py", ".md", ".sh", ".css", ".toml")
SKIPPED_DIRS = ("tests/fixtures", "docs/screenshots")
#: Never read by the "nothing points outside" check (besides binary files).
OPAQUE_DIRS = (".git", "reflex.lock")
#: Only used when git is not available: folders that are never part of the repository.
UNTRACKED_DIRS = (".git", ".venv", ".web", ".states", ".tools", ".redis", ".pytest_cache", "node_modules",
                  "__pycache__", "test-artifacts", "build", "dist")

#: The first rules, the ones every later rule builds on: all of them must be defined.
FIRST_RULES = range(1, 26)

# A definition: optional list marker or heading, then the id in bold (or a heading's first word).
_DEFINITION = re.compile(r"^\s*(?:[-*+]\s+|#{1,6}\s+)?(?:\*\*)S(\d+)\b|^#{1,6}\s+S(\d+)\b")
# A citation: S<n> not glued to a letter, digit or underscore, optionally a range "S<a>-S<b>" / "S<a>–<b>".
_CITATION = re.compile(r"(?<![A-Za-z0-9_])S(\d+)(?:\s?[-–]\s?S?(\d+))?(?![A-Za-z0-9_])")
# Lowercase citations: the s<n> parts of a test name (test_s07_..., ..._s02_s12).
_TEST_NAME = re.compile(r"\btest_[A-Za-z0-9_]*")
_TEST_NAME_PART = re.compile(r"(?<=_)s(\d+)(?=_|$)")

# Spelled in pieces so that this file does not contain what it looks for.
_OUTSIDE = ("../" + "shared", "shared" + "/spec", "shared" + "/docs")


def _repo_files() -> list[str]:
    """Files git knows about (tracked, plus new files not ignored), as POSIX paths relative to ROOT."""
    if shutil.which("git") and (ROOT / ".git").exists():
        done = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                              cwd=ROOT, capture_output=True, check=False)
        if done.returncode == 0:
            names = sorted({n for n in done.stdout.decode("utf-8", "surrogateescape").split("\0") if n})
            return [n for n in names if (ROOT / n).is_file()]
    return sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
                  if p.is_file() and not set(p.relative_to(ROOT).parts[:-1]) & set(UNTRACKED_DIRS))


def _under(name: str, folders: tuple[str, ...]) -> bool:
    return any(name == f or name.startswith(f + "/") for f in folders)


def _text(name: str) -> str | None:
    """The file as text, or None for a binary file."""
    data = (ROOT / name).read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _scanned_files() -> list[str]:
    return [n for n in _repo_files()
            if n.endswith(SCANNED_SUFFIXES) and ("/" not in n or _under(n, SCANNED_DIRS))
            and not _under(n, SKIPPED_DIRS)]


def defined_ids() -> list[int]:
    """Rule numbers defined in docs/semantics.md, in order of definition (duplicates kept)."""
    ids: list[int] = []
    for line in SEMANTICS.read_text(encoding="utf-8").splitlines():
        if m := _DEFINITION.match(line):
            ids.append(int(m.group(1) or m.group(2)))
    return ids


def cited_ids(text: str) -> Iterator[tuple[int, int, str]]:
    """(line number, rule number, as written) for every rule citation in ``text``."""
    for number, line in enumerate(text.splitlines(), 1):
        for m in _CITATION.finditer(line):
            first = int(m.group(1))
            last = int(m.group(2)) if m.group(2) else first
            if last < first:
                yield number, -1, m.group(0)  # a backwards range is never a valid citation
                continue
            for rule in range(first, last + 1):
                yield number, rule, m.group(0)
        for name in _TEST_NAME.finditer(line):
            for part in _TEST_NAME_PART.finditer(name.group(0)):
                yield number, int(part.group(1)), part.group(0)


def test_cited_rule_ids_are_defined():
    defined = set(defined_ids())
    assert defined, f"no rule definitions found in {SEMANTICS.relative_to(ROOT)}"
    files = _scanned_files()
    assert "README.md" in files and "docs/semantics.md" in files
    undefined = [f"{name}:{line}: {written}" + (f" (S{rule} is not defined)" if rule >= 0 else " (backwards range)")
                 for name in files if (text := _text(name)) is not None
                 for line, rule, written in cited_ids(text) if rule not in defined]
    assert not undefined, "rule ids cited but not defined in docs/semantics.md:\n" + "\n".join(undefined)


def test_nothing_points_outside_the_repository():
    found = [f"{name}:{number}: {needle}"
             for name in _repo_files() if not _under(name, OPAQUE_DIRS) and (text := _text(name)) is not None
             for number, line in enumerate(text.splitlines(), 1)
             for needle in _OUTSIDE if needle in line]
    assert not found, "references to files outside the repository:\n" + "\n".join(found)


def test_first_rules_are_all_defined_once():
    ids = defined_ids()
    missing = [f"S{n}" for n in FIRST_RULES if n not in ids]
    assert not missing, f"rules missing from docs/semantics.md: {', '.join(missing)}"
    twice = sorted({f"S{n}" for n in ids if ids.count(n) > 1})
    assert not twice, f"rules defined more than once: {', '.join(twice)}"
    gaps = [f"S{n}" for n in range(1, max(ids) + 1) if n not in ids]
    assert not gaps, f"gaps in the rule numbering: {', '.join(gaps)}"


def test_citation_pattern():
    """The patterns themselves: what counts as a citation and what does not."""
    def rules(text: str) -> list[int]:
        return [rule for _, rule, _ in cited_ids(text)]

    assert rules("see S7, S07 and (S25).") == [7, 7, 25]
    assert rules("rules S1-S3 and S16–S18, S4–5") == [1, 2, 3, 16, 17, 18, 4, 5]
    assert rules("RS256 US1 CSS3 S3Client S1_x xS2 S2x") == []
    assert rules("def test_s07_multi_interrupt_resumes_once(): ...") == [7]
    assert rules("def test_langgraph_std_approval_s02_s12(): ...") == [2, 12]
    assert rules('{"id": "s1", "session_id": "s2"} tests1 my_s3_var') == []
    assert rules("S9" + "-S3") == [-1]  # split: this file is scanned too
    assert _DEFINITION.match("- **S7 — Answers accumulate; one resume.** text")
    assert _DEFINITION.match("### S12 — The standard resume request")
    assert not _DEFINITION.match("- **D1** (S15) — a decision")
    assert not _DEFINITION.match("the rule S7 says")
