"""The approval-condition language: what it accepts, how it decides, and that it never runs code."""

from __future__ import annotations

import pytest

from tools.conditions import (
    MAX_DEPTH,
    ConditionError,
    ConditionUnevaluable,
    check_condition,
    condition_holds,
    parse_condition,
)

ARGUMENTS = {
    "amount": 150,
    "rate": 0.5,
    "path": "/etc/passwd",
    "a": "x",
    "b": 2,
    "force": True,
    "tags": ["red", "blue"],
    "target": {"host": "db.internal", "ports": [5432, 6432]},
    "note": None,
}


@pytest.mark.parametrize(
    ("condition", "holds"),
    [
        ("amount > 100", True),
        ("amount <= 100", False),
        ("rate >= 0.5", True),
        ("amount != 150", False),
        ('path startswith "/etc"', True),
        ("path endswith '.conf'", False),
        ('path contains "pass"', True),
        ('a == "x" and b < 3', True),
        ('a == "y" or b == 2', True),
        ("not (amount > 100)", False),
        ("not force", False),
        ("force", True),
        ('tags contains "red"', True),
        ('a in ["x", "y"]', True),
        ("b in [1, 3]", False),
        ('"pass" in path', True),
        ('target.host endswith ".internal"', True),
        ("target.ports.1 == 6432", True),
        ("note == null", True),
        ('(amount > 1000 or path startswith "/etc") and not b == 3', True),
        ("amount > 100 or missing == 1", True),  # decided before the missing argument is read
        ("-5 < b", True),
        ("amount > 1e2", True),
    ],
)
def test_a_condition_is_decided_over_the_arguments(condition: str, holds: bool) -> None:
    assert condition_holds(condition, ARGUMENTS) is holds


@pytest.mark.parametrize(
    "condition",
    [
        "missing > 1",
        "target.user == 'root'",
        "target.ports.5 == 1",
        'amount == "150"',  # a number is not text
        "path > 3",
        "amount startswith '1'",
        "amount",  # not a boolean
        "tags > 1",
        "force and amount",
        "b in 3",
    ],
)
def test_a_condition_that_cannot_be_decided_says_so(condition: str) -> None:
    with pytest.raises(ConditionUnevaluable):
        condition_holds(condition, ARGUMENTS)


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ("", "the condition is empty"),
        ("amount >", "expected an argument name or a value, found the end of the condition at position 9"),
        ("amount > 1 2", "expected 'and', 'or' or the end, found '2' at position 12"),
        ("(amount > 1", "expected ')'"),
        ("amount === 1", "unexpected character '=' at position 10"),
        ("__import__('os').system('x')", "found '('"),
        ("amount.__class__ == 1 ; 2", "unexpected character ';'"),
        ("amount > and", "expected an argument name or a value"),
        ("a in [b]", "a list holds only numbers, text, true, false or null"),
        ("a.", "expected a key or an index after '.'"),
        ("x" * 1001, "longer than 1000 characters"),
        ("not " * (MAX_DEPTH + 1) + "force", f"nests deeper than {MAX_DEPTH} levels"),
    ],
)
def test_a_malformed_condition_is_refused_with_where_it_went_wrong(condition: str, message: str) -> None:
    with pytest.raises(ConditionError) as refused:
        parse_condition(condition)

    assert message in str(refused.value)


def test_dotted_names_only_read_keys_of_the_arguments_never_attributes() -> None:
    with pytest.raises(ConditionUnevaluable):
        condition_holds("amount.__class__ == 'int'", ARGUMENTS)
    assert condition_holds("__class__ == 1", {"__class__": 1}) is True


def test_a_condition_naming_an_argument_the_tool_lacks_is_refused() -> None:
    parameters = {"type": "object", "properties": {"amount": {"type": "number"}}}

    check_condition("amount > 100", parameters)
    with pytest.raises(ConditionError, match="the tool has no argument 'amout'"):
        check_condition("amout > 100", parameters)


def test_strings_take_escapes() -> None:
    assert condition_holds(r'q == "say \"hi\""', {"q": 'say "hi"'}) is True
    assert condition_holds(r"q == 'it\'s'", {"q": "it's"}) is True
