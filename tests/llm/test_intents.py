"""The plain-English conventions shared by the demo model and the fake server's auto replies."""

from __future__ import annotations

import pytest

from agents.llm.base import ToolSchema
from agents.llm.intents import ToolRequest, coerce, describe_tool_result, parse_tool_requests, unwrap_tool_output
from tests.llm.helpers import ROLL_DICE_TOOL, SECRET_CODE_TOOL, SEED_PARALLEL_CALLS, SEED_SINGLE_CALL

TOOLS = (SECRET_CODE_TOOL, ROLL_DICE_TOOL)


def test_the_seed_message_asks_for_one_secret_code_call() -> None:
    assert parse_tool_requests(SEED_SINGLE_CALL, TOOLS) == [
        ToolRequest("get_secret_code_tool", {"input_text": "hello world"})
    ]


def test_the_seed_parallel_message_asks_for_three_codes_and_one_dice_roll() -> None:
    assert parse_tool_requests(SEED_PARALLEL_CALLS, TOOLS) == [
        ToolRequest("get_secret_code_tool", {"input_text": "hello world"}),
        ToolRequest("get_secret_code_tool", {"input_text": "hello letta"}),
        ToolRequest("get_secret_code_tool", {"input_text": "hello test"}),
        ToolRequest("roll_dice_tool", {"num_sides": 16}),
    ]


def test_explicit_pairs_win_and_a_repeated_key_starts_another_call() -> None:
    text = "call get_secret_code with input_text='a b' then input_text=\"c\""

    assert parse_tool_requests(text, TOOLS) == [
        ToolRequest("get_secret_code_tool", {"input_text": "a b"}),
        ToolRequest("get_secret_code_tool", {"input_text": "c"}),
    ]


def test_a_tool_can_be_named_without_its_tool_suffix_or_with_one_it_lacks() -> None:
    plain = ToolSchema("roll_dice", "", ROLL_DICE_TOOL.parameters)

    assert parse_tool_requests("Call roll_dice with num_sides=8.", TOOLS) == [
        ToolRequest("roll_dice_tool", {"num_sides": 8})
    ]
    assert parse_tool_requests("call the roll_dice_tool with num_sides: 4", (plain,)) == [
        ToolRequest("roll_dice", {"num_sides": 4})
    ]


def test_a_repeat_count_repeats_the_call_and_is_not_taken_as_an_argument() -> None:
    requests = parse_tool_requests("call roll_dice 3 times with 20 sides", TOOLS)

    assert requests == [ToolRequest("roll_dice_tool", {"num_sides": 20})] * 3


def test_apostrophes_are_not_quotes() -> None:
    requests = parse_tool_requests("don't worry, just call get_secret_code_tool for 'hi there' won't you", TOOLS)

    assert requests == [ToolRequest("get_secret_code_tool", {"input_text": "hi there"})]


def test_text_that_names_no_attached_tool_asks_for_nothing() -> None:
    assert parse_tool_requests("call me maybe, or call send_email with to=x", TOOLS) == []
    assert parse_tool_requests("roll_dice_tool is nice", TOOLS) == []


@pytest.mark.parametrize(
    ("value", "schema", "expected"),
    [
        ("6", {"type": "integer"}, 6),
        ("6.0", {"type": "integer"}, 6),
        ("2.5", {"type": "number"}, 2.5),
        ("true", {"type": "boolean"}, True),
        ("no", {"type": "boolean"}, False),
        ("[1, 2]", {"type": "array"}, [1, 2]),
        ("six", {"type": "integer"}, "six"),
        ("42", {"type": "string"}, "42"),
    ],
)
def test_values_are_coerced_to_the_schema_type(value: str, schema: dict[str, str], expected: object) -> None:
    assert coerce(value, schema) == expected


def test_a_getter_result_reads_as_a_sentence_about_its_value() -> None:
    assert describe_tool_result("get_secret_code_tool", "740845635798344975", is_error=False) == (
        "get_secret_code_tool says the secret code is 740845635798344975."
    )
    assert describe_tool_result("roll_dice_tool", "4", is_error=False) == "roll_dice_tool returned 4."


def test_a_packaged_result_is_unwrapped() -> None:
    assert unwrap_tool_output('{"status": "OK", "message": "7", "time": "now"}') == "7"
    assert unwrap_tool_output("[1, 2]") == "[1, 2]"
    assert unwrap_tool_output("plain") == "plain"


def test_a_denial_is_described_with_its_reason() -> None:
    content = '{"status": "Failed", "message": "Error: request to call tool denied. User reason: the code is 5"}'

    sentence = describe_tool_result("get_secret_code_tool", content, is_error=True)

    assert (
        sentence
        == "The call to get_secret_code_tool was denied: request to call tool denied. User reason: the code is 5"
    )


def test_a_failure_is_described_as_a_failure() -> None:
    assert (
        describe_tool_result("roll_dice_tool", "Error: boom", is_error=True)
        == "The call to roll_dice_tool failed: boom"
    )
