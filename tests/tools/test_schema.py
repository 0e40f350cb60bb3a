"""Schema derivation from source: Letta's shape for real-world signatures, clear errors with lines."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from tests.seed_tools import GET_SECRET_CODE_SOURCE, ROLL_DICE_SOURCE
from tools.schema import ToolSourceError, derive_tool_schema


def test_it_derives_the_secret_code_tool_exactly_as_letta_does():
    # json_schema from the wire capture of a real Letta 0.13.0 server (LETTA_WIRE.md).
    assert derive_tool_schema(GET_SECRET_CODE_SOURCE) == {
        "name": "get_secret_code_tool",
        "description": (
            "A tool that returns the secret code based on the input. This tool requires approval before execution."
        ),
        "parameters": {
            "type": "object",
            "properties": {"input_text": {"type": "string", "description": "The input text to process."}},
            "required": ["input_text"],
        },
    }


def test_it_derives_the_roll_dice_tool_exactly_as_letta_does():
    assert derive_tool_schema(ROLL_DICE_SOURCE) == {
        "name": "roll_dice_tool",
        "description": "A tool that returns a random number between 1 and num_sides.",
        "parameters": {
            "type": "object",
            "properties": {"num_sides": {"type": "integer", "description": "The number of sides on the die."}},
            "required": ["num_sides"],
        },
    }


def _params(signature: str, doc_args: str = "") -> dict[str, Any]:
    docstring = f'    """Do it.\n\n    Args:\n{textwrap.indent(doc_args, " " * 8)}    """\n' if doc_args else ""
    source = f"from typing import *\nimport typing\n\ndef tool({signature}) -> str:\n{docstring}    return ''\n"
    return derive_tool_schema(source)["parameters"]


@pytest.mark.parametrize(
    ("signature", "properties", "required"),
    [
        ("city: str", {"city": {"type": "string"}}, ["city"]),
        ("count: int = 3", {"count": {"type": "integer"}}, []),
        ("ratio: float", {"ratio": {"type": "number"}}, ["ratio"]),
        ("verbose: bool = False", {"verbose": {"type": "boolean"}}, []),
        ("units: Optional[str] = None", {"units": {"type": "string"}}, []),
        ("units: str | None = None", {"units": {"type": "string"}}, []),
        ("cursor: str | None", {"cursor": {"type": ["string", "null"]}}, ["cursor"]),
        ("ids: list[int]", {"ids": {"type": "array", "items": {"type": "integer"}}}, ["ids"]),
        ("names: List[str]", {"names": {"type": "array", "items": {"type": "string"}}}, ["names"]),
        ("rows: list", {"rows": {"type": "array"}}, ["rows"]),
        ("pair: tuple[float, ...]", {"pair": {"type": "array", "items": {"type": "number"}}}, ["pair"]),
        (
            "grid: list[list[int]]",
            {"grid": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}},
            ["grid"],
        ),
        (
            "headers: dict[str, str]",
            {"headers": {"type": "object", "additionalProperties": {"type": "string"}}},
            ["headers"],
        ),
        ("payload: dict", {"payload": {"type": "object"}}, ["payload"]),
        ("extra: Dict[str, Any] = None", {"extra": {"type": "object"}}, []),
        ("value: Any", {"value": {}}, ["value"]),
        ('mode: Literal["fast", "slow"] = "fast"', {"mode": {"type": "string", "enum": ["fast", "slow"]}}, []),
        ("level: Literal[1, 2, 3]", {"level": {"type": "integer", "enum": [1, 2, 3]}}, ["level"]),
        ("key: int | str", {"key": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}, ["key"]),
        ("key: typing.Union[int, str]", {"key": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}, ["key"]),
        (
            "tags: typing.Optional[typing.List[str]] = None",
            {"tags": {"type": "array", "items": {"type": "string"}}},
            [],
        ),
        ("maybe: list[int | None]", {"maybe": {"type": "array", "items": {"type": ["integer", "null"]}}}, ["maybe"]),
        ('when: "str"', {"when": {"type": "string"}}, ["when"]),
        ('n: Annotated[int, "How many."]', {"n": {"type": "integer", "description": "How many."}}, ["n"]),
        ("query: str, *, limit: int = 10", {"query": {"type": "string"}, "limit": {"type": "integer"}}, ["query"]),
        ("anything", {"anything": {"type": "string"}}, ["anything"]),
    ],
)
def test_it_maps_real_world_signatures_to_json_schema(signature, properties, required):
    assert _params(signature) == {"type": "object", "properties": properties, "required": required}


def test_it_takes_argument_descriptions_from_both_google_docstring_forms():
    params = _params(
        "query: str, limit: int = 5",
        "query (str): What to look for.\nlimit: How many results,\n    at most 50.\n",
    )
    assert params["properties"]["query"]["description"] == "What to look for."
    assert params["properties"]["limit"]["description"] == "How many results,\nat most 50."


def test_it_types_an_unannotated_argument_from_its_docstring_type():
    params = _params("count, names=None", "count (int): How many.\nnames (list[str], optional): Who.\n")
    assert params["properties"]["count"] == {"type": "integer", "description": "How many."}
    assert params["properties"]["names"] == {"type": "array", "items": {"type": "string"}, "description": "Who."}
    assert params["required"] == ["count"]


def test_it_falls_back_to_string_for_an_informal_docstring_type():
    params = _params("names", "names (list of str): Who.\n")
    assert params["properties"]["names"] == {"type": "string", "description": "Who."}


def test_it_takes_the_description_from_the_text_before_the_sections():
    source = '''
async def fetch(url: str) -> str:
    """Fetch a page.

    Follows redirects
    and returns text.

    Args:
        url: The page.

    Raises:
        ValueError: never.
    """
'''
    schema = derive_tool_schema(source)
    assert schema["name"] == "fetch"
    assert schema["description"] == "Fetch a page.\n\nFollows redirects\nand returns text."


def test_it_allows_private_helpers_classes_and_imports_beside_the_tool():
    source = """
import json
from dataclasses import dataclass

LIMIT = 3

@dataclass
class Row:
    value: int

def _helper(row: Row) -> int:
    return row.value

def public_tool(n: int) -> str:
    return json.dumps(_helper(Row(n)))
"""
    assert derive_tool_schema(source)["name"] == "public_tool"


def test_it_picks_the_named_function_among_several():
    source = "def first(a: int) -> int:\n    return a\n\ndef second(b: str) -> str:\n    return b\n"
    assert derive_tool_schema(source, function_name="second")["parameters"]["required"] == ["b"]


def test_it_never_runs_the_source():
    source = "raise SystemExit('executed!')\n\ndef tool() -> str:\n    return 'ok'\n"
    assert derive_tool_schema(source)["name"] == "tool"


@pytest.mark.parametrize(
    ("source", "problem", "line"),
    [
        ("def broken(x: int) -> str\n    return x\n", "syntax error", 1),
        ("def f(x):\n    return (\n", "syntax error", 2),
        ("", "empty", None),
        ("import os\nVALUE = 1\n", "no public function", None),
        ("def _private() -> str:\n    return ''\n", "no public function", None),
        ("def a() -> str:\n    return ''\n\n\ndef b() -> str:\n    return ''\n", "several public functions", 5),
        ("def f(x: set[int]) -> str:\n    return ''\n", "unsupported type annotation 'set[int]'", 1),
        (
            "class Model:\n    pass\n\ndef f(m: Model) -> str:\n    return ''\n",
            "unsupported type annotation 'Model'",
            4,
        ),
        ("def f(\n    a: int,\n    b: Callable[[int], int],\n) -> str:\n    return ''\n", "parameter 'b'", 3),
        ("def f(*args) -> str:\n    return ''\n", "*args is not supported", 1),
        ("def f(a: int,\n      **options) -> str:\n    return ''\n", "**options is not supported", 2),
        ("def f(a, /) -> str:\n    return ''\n", "positional-only", 1),
        ("def f(m: dict[int, str]) -> str:\n    return ''\n", "keys must be str", 1),
        ("def f(t: tuple[int, str]) -> str:\n    return ''\n", "only tuple[X, ...]", 1),
        ("def f(agent_state, x: int) -> str:\n    return ''\n", "agent_state", 1),
        ("def größe(x: int) -> str:\n    return ''\n", "cannot be a tool name", 1),
        ("def f(x: 'not valid(') -> str:\n    return ''\n", "unsupported type annotation", 1),
        ("def f(x: Literal[len]) -> str:\n    return ''\n", "Literal values must be constants", 1),
    ],
)
def test_it_rejects_source_it_cannot_turn_into_a_tool_naming_problem_and_line(source, problem, line):
    with pytest.raises(ToolSourceError) as raised:
        derive_tool_schema(source)
    assert problem in str(raised.value)
    assert raised.value.line == line
    if line is not None:
        assert f"(line {line})" in str(raised.value)


def test_its_error_is_a_value_error_with_the_bare_message_kept():
    with pytest.raises(ValueError, match="no public function") as raised:
        derive_tool_schema("x = 1\n")
    assert raised.value.message.startswith("no public function found")


def test_it_rejects_a_function_name_that_does_not_exist():
    with pytest.raises(ToolSourceError, match="no public top-level function named 'missing'"):
        derive_tool_schema("def present() -> str:\n    return ''\n", function_name="missing")
