"""Rules as code (issue 43): the policy file's parsing, its errors with their 1-based lines, and its re-reading."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from interrupt_chat.model import policy_file
from interrupt_chat.model.policy_file import FileRule, PolicyFile, PolicyFileError, Risk

GOOD = """\
# What the agent may do without asking (docs: rules as code).
- tool: send_email
  when: {to: {matches: "*@example.com"}}
  effect: allow
  risk: {level: low, why: Internal mail}

- tool: pay_invoice
  when:
    amount: {at-most: 1000}
    currency: {one-of: [EUR, USD]}
  effect: allow

- tool: pay_invoice
  effect: ask
  risk: {level: high, why: Moves money}

- tool: "deploy_*"
  effect: deny
  mode: shadow
"""


def test_a_good_file_gives_its_rules_in_file_order():
    rules = policy_file.parse(GOOD, "policies.yaml")
    assert rules == (
        FileRule("send_email", "allow", {"to": {"matches": "*@example.com"}}, Risk("low", "Internal mail"), line=2),
        FileRule("pay_invoice", "allow", {"amount": {"at-most": 1000}, "currency": {"one-of": ["EUR", "USD"]}},
                 line=7),
        FileRule("pay_invoice", "ask", risk=Risk("high", "Moves money"), line=13),
        FileRule("deploy_*", "deny", shadow=True, line=17),
    )
    assert rules[3].applies("deploy_prod", {}) and not rules[3].applies("undeploy", {})
    assert rules[1].applies("pay_invoice", {"amount": 10, "currency": "EUR"})
    assert not rules[1].applies("pay_invoice", {"amount": 10, "currency": "GBP"})
    assert rules[0].describe() == "policy file, line 2: allow send_email when to matches *@example.com"
    assert rules[3].describe() == "policy file, line 17: deny deploy_* (shadow)"


def test_enforce_mode_and_a_risk_without_why_are_fine():
    [rule] = policy_file.parse("- {tool: x, effect: deny, mode: enforce, risk: {level: medium}}\n")
    assert rule == FileRule("x", "deny", risk=Risk("medium"), line=1)


@pytest.mark.parametrize("text", ["", "# nothing yet\n", "[]\n"], ids=["empty", "comment", "empty-list"])
def test_an_empty_file_has_no_rules(text):
    assert policy_file.parse(text) == ()


@pytest.mark.parametrize(("text", "line", "reason"), [
    ("- tool: a\n  effect: allow\n- tool: b\n  effect: [deny\n", 5, "invalid YAML"),
    ("- tool: a\n  effect: allow\n- tool: b\n  efect: deny\n", 4, "rule 2: unknown key 'efect'"),
    ("- tool: a\n  effect: maybe\n", 2, "rule 1: effect 'maybe' is not one of allow, deny, ask"),
    ("- tool: a\n  effect: allow\n  when:\n    amount:\n      atmost: 3\n", 5,
     "rule 1: when.amount: unknown op 'atmost'"),
    ("- tool: a\n  effect: allow\n  risk:\n    level: extreme\n", 4,
     "rule 1: risk level 'extreme' is not one of low, medium, high"),
    ("- tool: a\n  effect: allow\n- tool: b\n  effect: deny\n- effect: ask\n  when: {}\n", 5, "rule 3: no 'tool'"),
    ("- tool: a\n  effect: allow\n  when:\n    to: {equals: x}\n    amount: {at-most: lots}\n", 5,
     "rule 1: when.amount: at-most needs a number"),
    ("- tool: a\n  effect: allow\n  mode: loud\n", 3, "rule 1: mode 'loud' is not one of shadow, enforce"),
    ("- tool: a\n  effect: allow\n  risk: {why: x}\n", 3, "rule 1: risk: no 'level'"),
    ("- tool: ''\n  effect: allow\n", 1, "rule 1: tool is empty"),
    ("- tool: a\n  effect: allow\n  effect: deny\n", 3, "key 'effect' appears twice"),
    ("tool: a\neffect: allow\n", 1, "the file must be a list of rules"),
    ("- tool: a\n  effect: allow\n- just a string\n", 3, "rule 2 must be a mapping"),
    ("- tool: a\n  effect: allow\n  when:\n    amount: 5\n", 4, "rule 1: when.amount must be a mapping"),
], ids=["yaml", "unknown-key", "unknown-effect", "unknown-op", "unknown-level", "no-tool", "at-most-text",
        "unknown-mode", "risk-no-level", "empty-tool", "repeated-key", "not-a-list", "not-a-mapping", "scalar-when"])
def test_a_malformed_file_names_the_line_and_the_reason(text, line, reason):
    with pytest.raises(PolicyFileError) as caught:
        policy_file.parse(text, "p.yaml")
    error = caught.value
    assert (error.path, error.line) == ("p.yaml", line)
    assert error.reason.startswith(reason), error.reason
    assert str(error) == f"p.yaml:{line}: {error.reason}"


def test_the_first_error_in_document_order_is_reported():
    text = "- tool: a\n  effect: allow\n- tool: b\n  effect: nope\n- tool: c\n  efect: deny\n"
    with pytest.raises(PolicyFileError, match=r"^p.yaml:4: rule 2: effect 'nope'"):
        policy_file.parse(text, "p.yaml")


def test_load_reads_the_file_and_a_missing_one_is_an_error(tmp_path: Path):
    path = tmp_path / "policies.yaml"
    path.write_text(GOOD, encoding="utf-8")
    assert len(policy_file.load(path)) == 4
    with pytest.raises(PolicyFileError) as caught:
        policy_file.load(tmp_path / "missing.yaml")
    assert caught.value.line == 0 and str(caught.value).startswith(f"{tmp_path / 'missing.yaml'}:0: ")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _write(path: Path, text: str, mtime: int) -> None:
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(mtime, mtime))  # a distinct modification time even within the filesystem's resolution


def test_the_policy_file_is_reread_on_change_and_a_bad_version_is_logged_once(tmp_path: Path, caplog):
    path, clock = tmp_path / "policies.yaml", Clock()
    _write(path, "- {tool: a, effect: allow}\n", 1_000_000_000)
    watched = PolicyFile(path, check_every=1.0, clock=clock)
    assert watched.path == str(path) and [r.tool for r in watched.rules()] == ["a"]

    _write(path, "- {tool: b, effect: deny}\n", 2_000_000_000)
    assert [r.tool for r in watched.rules()] == ["a"]  # not looked at again within check_every
    clock.now += 1.0
    assert [r.tool for r in watched.rules()] == ["b"]

    caplog.set_level(logging.WARNING, logger=policy_file.__name__)
    _write(path, "- {tool: c, efect: deny}\n", 3_000_000_000)
    for _ in range(3):
        clock.now += 1.0
        assert [r.tool for r in watched.rules()] == ["b"]  # the last good rules stay
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "unknown key 'efect'" in warnings[0].getMessage()

    path.unlink()
    clock.now += 1.0
    assert [r.tool for r in watched.rules()] == ["b"]
    clock.now += 1.0
    watched.rules()
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 2  # vanished: logged once too

    _write(path, "- {tool: d, effect: ask}\n", 4_000_000_000)
    clock.now += 1.0
    assert [r.tool for r in watched.rules()] == ["d"]  # a later good version is taken again


def test_the_policy_file_refuses_a_malformed_file_at_start(tmp_path: Path):
    path = tmp_path / "policies.yaml"
    path.write_text("- tool: a\n  effect: sometimes\n", encoding="utf-8")
    with pytest.raises(PolicyFileError, match=r":2: rule 1: effect 'sometimes'"):
        PolicyFile(path)
    with pytest.raises(PolicyFileError):
        PolicyFile(tmp_path / "none.yaml")


def test_a_file_caught_empty_mid_write_keeps_its_rules_until_it_is_written(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text("- tool: pay_invoice\n  effect: deny\n")
    clock = [0.0]
    reader = PolicyFile(path, check_every=1.0, clock=lambda: clock[0])
    path.write_text("")  # truncated: the editor has not written yet
    clock[0] = 2.0
    assert [r.effect for r in reader.rules()] == ["deny"]
    path.write_text("- tool: pay_invoice\n  effect: allow\n")
    clock[0] = 4.0
    assert [r.effect for r in reader.rules()] == ["allow"]
    path.write_text("[]\n")  # no rules, said so
    clock[0] = 6.0
    assert reader.rules() == ()
