"""Issue 38 §2: a secret at any depth is a secret everywhere (S23).

One parametrised set of schemas (a secret in a nested object, an array of secrets, a map of secrets,
a secret behind a ``$ref`` or an ``anyOf``, and a schema that is itself a password) runs through the
store (the tracker's pickle and export, the audit's masking), the form builder (the default slot's
cards and fields) and the validator (its messages), with the same recursive test behind each.
"""

from __future__ import annotations

import json
import logging
import pickle
from types import SimpleNamespace
from typing import Any

import pytest
from ag_ui.core import Interrupt

from interrupt_chat.agui import InterruptTracker
from interrupt_chat.agui.interrupts import holds_secret, is_secret_schema, secret_in, secret_parts
from interrupt_chat.approvals import links
from interrupt_chat.model.cards import build_cards
from interrupt_chat.model.forms import WHOLE_ANSWER, FormError, fields_of, payload_from_form, validate_payload
from interrupt_chat.model.policies import approval_payload
from interrupt_chat.store.masking import MASKED, mask_secrets

SECRET = "hunter2-SECRET-9f8e7d"  # shorter than the schemas' minLength: the validator has something to say
LONG = 64


def _password(**extra: Any) -> dict[str, Any]:
    return {"type": "string", "format": "password", "minLength": LONG, **extra}


# (id, responseSchema, the masked field's name, what the person types there, the payload it becomes)
CASES: list[tuple[str, dict[str, Any], str, str, Any]] = [
    ("nested-object",
     {"type": "object", "properties": {
         "creds": {"type": "object", "required": ["auth"],
                   "properties": {"auth": _password(), "user": {"type": "string"}}},
         "note": {"type": "string"}}},
     "creds", json.dumps({"auth": SECRET, "user": "bob"}), {"creds": {"auth": SECRET, "user": "bob"}}),
    ("array-of-secrets",
     {"type": "object", "properties": {"keys": {"type": "array", "items": {"type": "string", "writeOnly": True,
                                                                            "minLength": LONG}}}},
     "keys", json.dumps([SECRET, SECRET + "-2"]), {"keys": [SECRET, SECRET + "-2"]}),
    ("map-of-secrets",
     {"type": "object", "properties": {"env": {"type": "object", "additionalProperties": _password()}}},
     "env", json.dumps({"TOKEN": SECRET}), {"env": {"TOKEN": SECRET}}),
    ("ref-to-a-secret",
     {"type": "object", "$defs": {"Token": _password()},
      "properties": {"deploy": {"type": "object", "properties": {"token": {"$ref": "#/$defs/Token"}}}}},
     "deploy", json.dumps({"token": SECRET}), {"deploy": {"token": SECRET}}),
    ("anyOf-secret-field",
     {"type": "object", "properties": {"pin": {"anyOf": [_password(), {"type": "null"}]}}},
     "pin", SECRET, {"pin": SECRET}),
    ("whole-answer-is-a-password", _password(), WHOLE_ANSWER, SECRET, SECRET),
]
IDS = [case[0] for case in CASES]


def _tracker(schema: dict[str, Any]) -> InterruptTracker:
    """A set of two: the secret one, and a plain approval whose answer must survive a round trip."""
    tracker = InterruptTracker()
    tracker.observe({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"})
    tracker.observe({"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1", "outcome": {"type": "interrupt",
                     "interrupts": [{"id": "secret", "reason": "input_required", "responseSchema": schema},
                                    {"id": "ok", "reason": "confirmation"}]}})
    tracker.finalize()
    return tracker


@pytest.mark.parametrize(("name", "schema", "field", "typed", "payload"), CASES, ids=IDS)
def test_the_store_never_keeps_a_nested_secret(name, schema, field, typed, payload):
    """Redis pickles, the database's export (what other tabs load) and the audit's masking."""
    assert holds_secret(schema) and secret_in(payload, schema)
    tracker = _tracker(schema)
    tracker.resolve({"approved": True}, "ok")
    assert tracker.resolve(payload, "secret").kind == "resume" and tracker.sealed  # sent at once, whole
    blob = pickle.dumps(tracker)
    assert SECRET.encode() not in blob
    restored = pickle.loads(blob)
    assert set(restored.answers) == {"ok"} and not restored.sealed  # the secret is asked again, the rest kept
    exported = tracker.export()
    assert SECRET not in json.dumps(exported)
    assert [a["interruptId"] for a in exported["answers"]] == ["ok"] and exported["sealed"] is False
    again = InterruptTracker()
    again.restore(exported)
    assert set(again.answers) == {"ok"}
    masked = mask_secrets(payload, schema)
    assert SECRET not in json.dumps(masked) and MASKED in json.dumps(masked)


@pytest.mark.parametrize(("name", "schema", "field", "typed", "payload"), CASES, ids=IDS)
def test_the_default_form_draws_a_nested_secret_masked(name, schema, field, typed, payload):
    """The card is a form; the field holding the secret is a password input, never prefilled."""
    tracker = _tracker(schema)
    [card, _] = build_cards(tracker.pending, tracker, None)
    assert card.kind == "form"
    drawn = {f.name: f for f in card.fields}
    assert drawn[field].type == "secret" and drawn[field].default == ""  # <input type="password">
    assert [f["type"] for f in fields_of(schema) if f["name"] == field] == ["secret"]
    assert approval_payload(Interrupt.model_validate({"id": "x", "reason": "tool_call", "responseSchema": schema}),
                            "allow") is None  # a rule never answers it
    session = SimpleNamespace(tracker=tracker, thread_id="t1")
    assert links.url_for("owner", session, "secret") == ""  # nor does a decision link (a secret is typed here)


@pytest.mark.parametrize(("name", "schema", "field", "typed", "payload"), CASES, ids=IDS)
def test_the_validator_names_the_field_and_rule_never_the_secret(name, schema, field, typed, payload, caplog):
    """What the person typed reads back as the payload; the error (minLength) never quotes it."""
    caplog.set_level(logging.DEBUG)
    long_enough = json.loads(json.dumps(payload).replace(SECRET, SECRET.ljust(LONG, "x")))
    typed_long = typed.replace(SECRET, SECRET.ljust(LONG, "x"))
    assert payload_from_form(schema, {field: typed_long}) == long_enough
    with pytest.raises(FormError) as info:
        payload_from_form(schema, {field: typed})
    said = [str(info.value), repr(info.value.args), *info.value.errors, *info.value.errors.values()]
    assert not [text for text in said if SECRET in text]
    assert ("(anyOf)" if name.startswith("anyOf") else "(minLength)") in str(info.value)  # it names the rule
    if field != WHOLE_ANSWER:
        assert field in str(info.value)  # it names the field at fault
    with pytest.raises(FormError) as direct:
        validate_payload(schema, payload)
    assert SECRET not in str(direct.value)
    assert SECRET not in caplog.text


def test_the_message_names_the_path_and_the_rule():
    schema = CASES[0][1]
    with pytest.raises(FormError) as info:
        validate_payload(schema, {"creds": {"auth": SECRET}})
    assert info.value.errors == {"creds": "creds.auth is not valid (minLength)"}
    with pytest.raises(FormError) as whole:
        validate_payload(_password(), SECRET)
    assert whole.value.errors == {"": "The answer does not fit the requested schema (minLength)."}


def test_an_error_beside_a_secret_keeps_its_message_and_one_above_it_quotes_nothing():
    schema = {"type": "object", "properties": {
        "creds": {"type": "object", "additionalProperties": False,
                  "properties": {"auth": {"type": "string", "format": "password"}, "user": {"type": "string"}}},
        "count": {"type": "integer"}}}
    with pytest.raises(FormError) as info:
        validate_payload(schema, {"creds": {"auth": SECRET, "user": "bob", "extra": 1}, "count": "x"})
    assert info.value.errors["count"] == "'x' is not of type 'integer'"  # no secret near: jsonschema's words
    assert info.value.errors["creds"] == "creds is not valid (additionalProperties)"
    assert SECRET not in str(info.value)


def test_a_rule_on_a_list_of_secrets_quotes_none_of_them():
    """An array's own rule (``uniqueItems``) quotes the whole array: its items are secrets."""
    schema = {"type": "object", "properties": {"keys": {"type": "array", "uniqueItems": True,
                                                        "items": {"type": "string", "writeOnly": True}}}}
    with pytest.raises(FormError) as info:
        validate_payload(schema, {"keys": [SECRET, SECRET]})
    assert info.value.errors == {"keys": "keys is not valid (uniqueItems)"}


def test_masking_follows_the_payload_and_leaves_the_rest():
    schema = CASES[0][1]
    payload = {"creds": {"auth": SECRET, "user": "bob", "extra": 1}, "note": "hi", "more": [1]}
    assert mask_secrets(payload, schema) == {"creds": {"auth": MASKED, "user": "bob", "extra": 1}, "note": "hi",
                                             "more": [1]}
    assert mask_secrets({"creds": SECRET}, schema) == {"creds": MASKED}  # not the schema's shape: all of it
    assert mask_secrets({"creds": None}, schema) == {"creds": None}  # nothing typed, nothing hidden
    assert not secret_in({"note": "hi"}, schema)  # an answer without the secret is kept (and stored)
    assert secret_parts({"note": "hi"}, schema, str) == ({"note": "hi"}, False)


def test_the_schema_tests_follow_refs_and_combinators_without_looping():
    loop: dict[str, Any] = {"$defs": {"node": {"type": "object", "properties": {
        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}, "key": {"writeOnly": True}}}},
        "$ref": "#/$defs/node"}
    assert holds_secret(loop)
    deep = {"children": [{"children": [{"key": SECRET, "children": []}]}]}
    assert SECRET not in json.dumps(mask_secrets(deep, loop))
    assert is_secret_schema({"allOf": [{"type": "string"}, {"format": "password"}]})
    assert is_secret_schema({"$ref": "#/$defs/p"}, {"$defs": {"p": {"writeOnly": True}}})
    assert not holds_secret({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}})
    assert not is_secret_schema({"writeOnly": False}) and not is_secret_schema(None)


def test_approved_edited_args_holding_a_secret_never_reach_the_transcript():
    """An approval whose ``editedArgs`` hold a secret: the call's shown (and stored) arguments are masked."""
    from interrupt_chat.agui.events import parse_event
    from interrupt_chat.agui.session import AgentSession

    schema = {"type": "object", "properties": {"approved": {"type": "boolean"}, "editedArgs": {
        "type": "object", "properties": {"token": {"type": "string", "format": "password"}}}}}
    session = AgentSession("http://127.0.0.1:9", thread_id="t1")
    for event in [{"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
                  {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "deploy"},
                  {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"token": ""}'},
                  {"type": "TOOL_CALL_END", "toolCallId": "c1"},
                  {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1", "outcome": {"type": "interrupt",
                   "interrupts": [{"id": "i1", "reason": "tool_call", "toolCallId": "c1", "responseSchema": schema}]}}]:
        session.transcript.apply(parse_event(event))
        session.tracker.observe(event)
    session.tracker.finalize()
    decision = session.tracker.resolve({"approved": True, "editedArgs": {"token": SECRET}}, "i1")
    session._show_decisions(decision)
    shown = json.dumps([m.model_dump(mode="json") for m in session.transcript.to_messages()])
    assert SECRET not in shown and MASKED in shown


def test_a_big_agent_schema_costs_one_pass_not_one_per_field():
    """Every field asks "does a secret hide in here?": one map of the schema answers them all."""
    import time

    props: dict[str, Any] = {f"p{i}": {"$ref": "#"} for i in range(3000)}  # each reaches the whole schema
    props["key"] = {"type": "string", "format": "password"}
    schema = {"type": "object", "properties": props}
    began = time.perf_counter()
    fields = fields_of(schema)
    masked = mask_secrets({"key": SECRET, "items": ["x"] * 50_000}, schema)
    assert time.perf_counter() - began < 2  # a scan per field would take several seconds here
    assert {f["type"] for f in fields} == {"secret"} and masked["key"] == MASKED
