"""interrupt_chat.model.forms: fields from a responseSchema, coercion of raw form data, validation (S22, S23)."""

from __future__ import annotations

import logging

import pytest

from interrupt_chat.model.forms import (
    FormError,
    approval_kind,
    fields_of,
    is_secret,
    payload_from_form,
    validate_payload,
)

SECRET = "sk-SUPER-SECRET-v4lue-9f8e7d"


def field(schema: dict, name: str) -> dict:
    return next(f for f in fields_of(schema) if f["name"] == name)


def errors_of(schema, form) -> dict[str, str]:
    with pytest.raises(FormError) as info:
        payload_from_form(schema, form)
    return info.value.errors


# -- fields_of (S22: boolean, enum -> choice, string, number, integer, masked, json) ---------------

KITCHEN_SINK = {
    "type": "object",
    "required": ["name", "count"],
    "properties": {
        "flag": {"type": "boolean"},
        "on_by_default": {"type": "boolean", "default": True},
        "color": {"type": "string", "enum": ["red", "green"], "default": "green"},
        "name": {"type": "string", "title": "Your name", "description": "as on your badge", "default": "Ada"},
        "ratio": {"type": "number", "default": 0.5},
        "count": {"type": "integer", "default": 3},
        "password": {"type": "string", "format": "password", "default": "agent-default"},
        "token": {"type": "string", "writeOnly": True},
        "options": {"type": "object", "default": {"a": 1}},
        "tags": {"type": "array"},
        "untyped": {},
        "nullable_int": {"type": ["null", "integer"]},
    },
}


def test_s22_fields_of_types_in_property_order():
    assert [(f["name"], f["type"]) for f in fields_of(KITCHEN_SINK)] == [
        ("flag", "boolean"), ("on_by_default", "boolean"), ("color", "enum"), ("name", "string"),
        ("ratio", "number"), ("count", "integer"), ("password", "secret"), ("token", "secret"),
        ("options", "json"), ("tags", "json"), ("untyped", "json"), ("nullable_int", "integer"),
    ]


def test_s22_fields_of_required_label_description():
    name = field(KITCHEN_SINK, "name")
    assert name["required"] is True and field(KITCHEN_SINK, "count")["required"] is True
    assert field(KITCHEN_SINK, "flag")["required"] is False
    assert name["label"] == "Your name" and name["description"] == "as on your badge"
    assert field(KITCHEN_SINK, "ratio")["label"] == "ratio" and field(KITCHEN_SINK, "ratio")["description"] == ""


def test_s22_fields_of_defaults_as_strings():
    assert field(KITCHEN_SINK, "name")["default"] == "Ada"
    assert field(KITCHEN_SINK, "ratio")["default"] == "0.5"
    assert field(KITCHEN_SINK, "count")["default"] == "3"
    assert field(KITCHEN_SINK, "color")["default"] == "green"
    assert field(KITCHEN_SINK, "options")["default"] == '{"a": 1}'
    assert field(KITCHEN_SINK, "tags")["default"] == ""
    assert field(KITCHEN_SINK, "flag")["checked"] is False
    assert field(KITCHEN_SINK, "on_by_default")["checked"] is True


def test_s22_fields_of_enum_options():
    color = field(KITCHEN_SINK, "color")
    assert color["options"] == ["red", "green"]
    assert field(KITCHEN_SINK, "name")["options"] == []


def test_s22_format_password_and_write_only_are_secret_and_never_prefilled():
    assert field(KITCHEN_SINK, "password")["type"] == "secret"
    assert field(KITCHEN_SINK, "password")["default"] == ""  # never put a value into a masked field
    assert field(KITCHEN_SINK, "token")["type"] == "secret"
    assert is_secret({"format": "password"}) and is_secret({"writeOnly": True})
    assert not is_secret({"writeOnly": False}) and not is_secret({"type": "string"}) and not is_secret(None)


def test_s22_untyped_password_property_is_secret():
    schema = {"properties": {"pin": {"format": "password"}, "key": {"writeOnly": True}}}
    assert [f["type"] for f in fields_of(schema)] == ["secret", "secret"]
    assert payload_from_form(schema, {"pin": "1234", "key": SECRET}) == {"pin": "1234", "key": SECRET}


def test_s22_fields_of_plain_data():
    for f in fields_of(KITCHEN_SINK):
        assert set(f) == {"name", "label", "description", "type", "options", "required", "default", "checked"}
        assert all(isinstance(f[k], str) for k in ("name", "label", "description", "type", "default"))


# -- approval_kind ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("schema", "kind"), [
    ({"properties": {"approved": {"type": "boolean"}}}, "approve"),
    ({"properties": {"approved": {"type": "boolean"}, "editedArgs": {"type": "object"}}}, "edit"),
    ({"properties": {"approved": {"type": "string"}}}, "form"),
    ({"properties": {"color": {"enum": ["red"]}}}, "form"),
    ({"properties": {"editedArgs": {"type": "object"}}}, "form"),
    ({}, "form"),
    (None, "form"),
    ("not a schema", "form"),
])
def test_s22_approval_kind(schema, kind):
    assert approval_kind(schema) == kind


# -- payload_from_form: coercion --------------------------------------------------------------------

def test_s22_checkbox_on_is_true_missing_is_false():
    schema = {"properties": {"a": {"type": "boolean"}, "b": {"type": "boolean"}}}
    assert payload_from_form(schema, {"a": "on"}) == {"a": True, "b": False}
    assert payload_from_form(schema, {"a": "off", "b": "false"}) == {"a": False, "b": False}
    assert payload_from_form(schema, {"a": True, "b": ""}) == {"a": True, "b": False}


def test_s22_numbers_are_parsed():
    schema = {"properties": {"n": {"type": "integer"}, "x": {"type": "number"}}}
    assert payload_from_form(schema, {"n": " 42 ", "x": "2.5"}) == {"n": 42, "x": 2.5}
    payload = payload_from_form(schema, {"n": "-1", "x": "3"})
    assert payload == {"n": -1, "x": 3.0} and type(payload["n"]) is int


def test_s22_number_parse_errors_are_reported_per_field():
    schema = {"properties": {"n": {"type": "integer", "title": "Count"}, "x": {"type": "number"},
                             "ok": {"type": "string"}}}
    errors = errors_of(schema, {"n": "2.5", "x": "abc", "ok": "fine"})
    assert set(errors) == {"n", "x"}
    assert errors["n"] == "Count must be a whole number"
    assert errors["x"] == "x must be a number"


def test_s22_empty_optional_fields_are_left_out():
    schema = {"properties": {"n": {"type": "integer"}, "s": {"type": "string"}, "j": {"type": "object"}}}
    assert payload_from_form(schema, {"n": "", "s": ""}) == {}
    assert payload_from_form(schema, {}) == {}


def test_s22_enum_keeps_the_options_json_type():
    schema = {"properties": {"level": {"enum": [1, 2, 3]}, "mode": {"enum": ["fast", "slow"]},
                             "flag": {"enum": [True, False]}}}
    payload = payload_from_form(schema, {"level": "2", "mode": "slow", "flag": field(schema, "flag")["options"][1]})
    assert payload == {"level": 2, "mode": "slow", "flag": False}
    assert type(payload["level"]) is int
    assert field(schema, "level")["options"] == ["1", "2", "3"]
    assert field(schema, "flag")["options"] == ["true", "false"]  # JSON spelling, as the agent wrote it


def test_s22_enum_rejects_unknown_option():
    schema = {"properties": {"mode": {"enum": ["fast", "slow"]}}}
    assert errors_of(schema, {"mode": "medium"}) == {"mode": "mode is not one of the choices"}


def test_s22_enum_null_option_is_sent_as_null():
    schema = {"required": ["pick"], "properties": {"pick": {"enum": ["a", None]}}}
    null_option = field(schema, "pick")["options"][1]
    assert payload_from_form(schema, {"pick": null_option}) == {"pick": None}


def test_s22_json_fields_are_parsed():
    schema = {"properties": {"o": {"type": "object"}, "a": {"type": "array"}, "u": {}}}
    assert payload_from_form(schema, {"o": '{"k": [1, 2]}', "a": "[1]", "u": "true"}) == {
        "o": {"k": [1, 2]}, "a": [1], "u": True}
    assert errors_of(schema, {"o": "{nope"}) == {"o": "o must be valid JSON"}


def test_s22_strings_and_unknown_form_keys():
    schema = {"properties": {"s": {"type": "string"}}}
    assert payload_from_form(schema, {"s": "  keep spaces ", "__interrupt_id": "x", "other": "y"}) == {
        "s": "  keep spaces "}


# -- payload_from_form: validation (jsonschema) ------------------------------------------------------

def test_s22_required_missing_is_an_error_on_that_field():
    schema = {"type": "object", "required": ["name", "age"],
              "properties": {"name": {"type": "string", "title": "Name"}, "age": {"type": "integer"}}}
    assert errors_of(schema, {"name": "", "age": ""}) == {"name": "Name is required", "age": "age is required"}
    assert errors_of(schema, {"name": "Ada"}) == {"age": "age is required"}


def test_s22_constraints_are_validated():
    schema = {"type": "object", "properties": {
        "age": {"type": "integer", "minimum": 18, "maximum": 130},
        "nick": {"type": "string", "maxLength": 3},
        "code": {"type": "string", "pattern": "^[A-Z]{2}$"},
        "ok": {"type": "string", "minLength": 1},
    }}
    errors = errors_of(schema, {"age": "12", "nick": "abcdef", "code": "abc", "ok": "y"})
    assert set(errors) == {"age", "nick", "code"}
    assert "minimum" in errors["age"] and "18" in errors["age"]
    assert "long" in errors["nick"]
    assert "match" in errors["code"]
    assert payload_from_form(schema, {"age": "30", "nick": "abc", "code": "AB", "ok": "y"}) == {
        "age": 30, "nick": "abc", "code": "AB", "ok": "y"}


def test_s22_form_error_message_joins_fields():
    exc = FormError({"a": "a is required", "": "whole form"})
    assert str(exc) == "a: a is required; whole form"
    assert isinstance(exc, ValueError)


def test_s22_validate_payload_accepts_a_valid_payload():
    validate_payload({"type": "object", "properties": {"approved": {"type": "boolean"}}}, {"approved": True})
    validate_payload(None, {"anything": 1})


def test_s22_validate_payload_names_the_field():
    schema = {"type": "object", "required": ["approved"],
              "properties": {"approved": {"type": "boolean"}, "editedArgs": {"type": "object"}}}
    with pytest.raises(FormError) as info:
        validate_payload(schema, {"approved": True, "editedArgs": [1, 2]})
    assert list(info.value.errors) == ["editedArgs"]


# -- S23: a secret never appears in an error ---------------------------------------------------------

SECRET_SCHEMA = {
    "type": "object",
    "required": ["api_key"],
    "properties": {
        "api_key": {"type": "string", "format": "password", "minLength": 64, "pattern": "^pk-"},
        "token": {"type": "string", "writeOnly": True, "maxLength": 4},
        "count": {"type": "integer"},
    },
}


def test_s23_secret_violating_constraints_is_not_echoed(caplog):
    caplog.set_level(logging.DEBUG)
    with pytest.raises(FormError) as info:
        payload_from_form(SECRET_SCHEMA, {"api_key": SECRET, "token": SECRET + "-2", "count": "1"})
    errors = info.value.errors
    assert set(errors) == {"api_key", "token"}
    assert SECRET not in str(info.value) and SECRET not in repr(info.value.args)
    assert all(SECRET not in message for message in errors.values())
    assert errors["api_key"] == "api_key is not valid (minLength)"
    assert SECRET not in caplog.text


def test_s23_secret_not_echoed_when_another_field_fails_to_parse():
    with pytest.raises(FormError) as info:
        payload_from_form(SECRET_SCHEMA, {"api_key": SECRET, "count": "many"})
    assert SECRET not in str(info.value)


@pytest.mark.parametrize("whole_form_rule", [
    {"maxProperties": 1},
    {"anyOf": [{"required": ["x"]}, {"required": ["y"]}]},
    {"oneOf": [{"required": ["x"]}, {"required": ["y"]}]},
    {"not": {"required": ["api_key"]}},
    {"if": {"required": ["count"]}, "then": {"required": ["x"]}, "else": False},
    {"dependentSchemas": {"api_key": {"required": ["x"]}}},
], ids=["maxProperties", "anyOf", "oneOf", "not", "if-then", "dependentSchemas"])
def test_s23_secret_not_echoed_by_whole_form_errors(whole_form_rule):
    schema = {"type": "object", "properties": {"api_key": {"type": "string", "format": "password"},
                                               "count": {"type": "integer"}}, **whole_form_rule}
    with pytest.raises(FormError) as info:
        payload_from_form(schema, {"api_key": SECRET, "count": "1"})
    assert SECRET not in str(info.value)
    assert all(SECRET not in m for m in info.value.errors.values())


def test_s22_whole_form_errors_without_secrets_keep_their_message():
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "maxProperties": 1}
    errors = errors_of(schema, {"a": "x", "b": "y"})
    assert list(errors) == [""] and "too many properties" in errors[""]


# -- broken schemas never crash ----------------------------------------------------------------------

BROKEN = [
    None, [], "x", 42,
    {"properties": [1, 2]},
    {"properties": {"a": "str", "b": None}},
    {"required": 5, "properties": {"a": {"type": "string"}}},
    {"required": True, "properties": {"a": {}}},
    {"required": "a", "properties": {"a": {"type": "string"}}},
    {"properties": {"a": {"$ref": "#/$defs/missing"}}},
    {"properties": {"a": {"$ref": "https://example.invalid/schema.json"}}},
    {"properties": {"a": {"type": "string", "pattern": "("}}},
    {"properties": {"a": {"type": "integer", "minimum": "x"}}},
    {"properties": {"a": {"enum": "abc"}}},
    {"properties": {"a": {"enum": []}}},
    {"properties": {"a": {"type": "nonsense"}}},
    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]},
]


@pytest.mark.parametrize("schema", BROKEN, ids=[str(i) for i in range(len(BROKEN))])
def test_s22_broken_schema_does_not_crash(schema):
    fields = fields_of(schema)
    assert isinstance(fields, list)
    assert approval_kind(schema) in ("approve", "edit", "form")
    try:
        payload = payload_from_form(schema, {"a": "1"})
    except FormError as exc:  # an answer the schema refuses is fine; a crash is not
        assert exc.errors
    else:
        assert isinstance(payload, dict)


def test_s22_a_schema_is_checked_once_and_a_change_to_the_callers_dict_is_a_new_schema(monkeypatch):
    """Checking a schema against its metaschema costs 100 times its use (issue 45): once per distinct schema."""
    import jsonschema

    from interrupt_chat.model import forms

    checks: list[dict] = []
    real = jsonschema.Draft202012Validator.check_schema.__func__  # type: ignore[attr-defined]

    def counting(cls, schema, *args, **kwargs):
        checks.append(schema)
        return real(cls, schema, *args, **kwargs)

    monkeypatch.setattr(jsonschema.Draft202012Validator, "check_schema", classmethod(counting))
    forms._checked_text.cache_clear()
    schema = {"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"]}
    for _ in range(5):
        validate_payload(schema, {"approved": True})
    validate_payload(dict(reversed(schema.items())), {"approved": True})  # the same schema, keys in another order
    assert len(checks) == 1
    schema["properties"]["approved"] = {"type": "string"}  # the caller changes its dict: a schema of its own
    with pytest.raises(FormError):
        validate_payload(schema, {"approved": True})
    assert len(checks) == 2
    schema["properties"]["approved"] = {"type": "boolean"}
    validate_payload(schema, {"approved": True})  # the kept validator was never changed by the caller
    huge = {"type": "object", "description": "x" * forms.MAX_CACHED_SCHEMA_CHARS}
    validate_payload(huge, {})
    validate_payload(huge, {})
    assert len(checks) == 4  # too large to keep: checked at each use
    forms._checked_text.cache_clear()
