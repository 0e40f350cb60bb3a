"""Argument validation: lossless coercion only, and errors that name the argument."""

from __future__ import annotations

import pytest

from tools.validation import ArgumentError, validate_arguments

PARAMETERS = {
    "type": "object",
    "properties": {
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "loud": {"type": "boolean"},
        "label": {"type": "string"},
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "weights": {"type": "array", "items": {"type": "number"}},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "cursor": {"type": ["string", "null"]},
        "key": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    },
    "required": ["count"],
}


def _validate(raw: str) -> dict:
    return validate_arguments("demo", PARAMETERS, raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"count": 6}', {"count": 6}),
        ('{"count": "6"}', {"count": 6}),
        ('{"count": " -12 "}', {"count": -12}),
        ('{"count": 6.0}', {"count": 6}),
        ('{"count": 1, "ratio": 6}', {"count": 1, "ratio": 6.0}),
        ('{"count": 1, "ratio": "2.5"}', {"count": 1, "ratio": 2.5}),
        ('{"count": 1, "loud": "true"}', {"count": 1, "loud": True}),
        ('{"count": 1, "loud": "false"}', {"count": 1, "loud": False}),
        ('{"count": 1, "label": 7}', {"count": 1, "label": "7"}),
        ('{"count": 1, "ids": "[1, \\"2\\"]"}', {"count": 1, "ids": [1, 2]}),
        ('{"count": 1, "weights": [1, 2]}', {"count": 1, "weights": [1.0, 2.0]}),
        ('{"count": 1, "headers": "{\\"a\\": \\"b\\"}"}', {"count": 1, "headers": {"a": "b"}}),
        ('{"count": 1, "cursor": null}', {"count": 1, "cursor": None}),
        ('{"count": 1, "ratio": null}', {"count": 1}),
        ('{"count": 1, "key": "x"}', {"count": 1, "key": "x"}),
        ('{"count": 1, "key": 3}', {"count": 1, "key": 3}),
    ],
)
def test_it_accepts_valid_calls_and_coerces_only_losslessly(raw, expected):
    result = _validate(raw)
    assert result == expected
    assert [type(value) for value in result.values()] == [type(value) for value in expected.values()]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('{"count": 6.5}', "argument 'count' must be of type integer, got 6.5"),
        ('{"count": true}', "argument 'count' must be of type integer, got true"),
        ('{"count": "six"}', "argument 'count' must be of type integer, got \"six\""),
        ('{"count": "6.0"}', "argument 'count' must be of type integer"),
        ('{"count": 1, "loud": 1}', "argument 'loud' must be of type boolean, got 1"),
        ('{"count": 1, "loud": "yes"}', "argument 'loud' must be of type boolean"),
        ('{"count": 1, "label": 1.5}', "argument 'label' must be of type string"),
        ('{"count": 1, "ratio": "NaN"}', "argument 'ratio' must be of type number"),
        ('{"count": 1, "mode": "turbo"}', 'argument \'mode\' must be one of "fast", "slow", got "turbo"'),
        ('{"count": 1, "ids": [1, "x"]}', "argument 'ids[1]' must be of type integer, got \"x\""),
        ('{"count": null}', "argument 'count' must be of type integer, got null"),
        ("{}", "missing required argument 'count'"),
        ('{"count": 1, "colour": "red"}', "unexpected argument 'colour'"),
        ('{"count": ', "not valid JSON"),
        ("[1, 2]", "expected a JSON object of named arguments, got list"),
    ],
)
def test_it_rejects_bad_calls_with_a_message_naming_the_argument(raw, message):
    with pytest.raises(ArgumentError) as raised:
        _validate(raw)
    assert str(raised.value).startswith("Invalid arguments for tool 'demo': ")
    assert message in str(raised.value)


def test_it_reads_empty_arguments_as_no_arguments():
    parameters = {"type": "object", "properties": {"tz": {"type": "string"}}, "required": []}
    assert validate_arguments("clock", parameters, "") == {}
    assert validate_arguments("clock", parameters, "null") == {}


def test_it_accepts_undeclared_arguments_when_the_schema_allows_them():
    parameters = {"type": "object", "properties": {}, "additionalProperties": True}
    assert validate_arguments("open", parameters, '{"anything": 1}') == {"anything": 1}


def test_it_lists_the_expected_arguments_when_one_is_unknown():
    with pytest.raises(ArgumentError, match=r"expected arguments: 'count', 'ratio'"):
        _validate('{"count": 1, "colour": "red"}')


def test_it_keeps_huge_integers_exact_rather_than_making_them_floats():
    parameters = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}
    assert validate_arguments("big", parameters, '{"n": 9007199254740993}') == {"n": 9007199254740993}


def test_it_reports_an_invalid_parameter_schema_instead_of_crashing():
    with pytest.raises(ArgumentError, match="invalid parameter schema"):
        validate_arguments("odd", {"type": "object", "properties": {"x": {"type": "banana"}}}, '{"x": 1}')
