"""The loop's decision after a step, as a pure function: no database, no model."""

from __future__ import annotations

import pytest

from agents.engine.rules import MAX_TRUNCATION_CONTINUES, StepFacts, decide_after_step, step_notice
from agents.engine.stop import StopReason


def facts(**overrides: object) -> StepFacts:
    values: dict[str, object] = {
        "truncated": False,
        "truncations": 0,
        "has_tool_calls": False,
        "awaits_approval": False,
        "terminal_tool_ran": False,
        "uncalled_required": (),
        "steps": 1,
        "max_steps": 10,
    }
    return StepFacts(**(values | overrides))  # type: ignore[arg-type]


def test_an_answer_without_tool_calls_ends_the_turn() -> None:
    assert decide_after_step(facts()) is StopReason.END_TURN


def test_an_answer_without_tool_calls_goes_on_while_required_tools_are_uncalled() -> None:
    assert decide_after_step(facts(uncalled_required=("roll_dice",))) is None


def test_calls_that_wait_for_a_person_stop_for_approval() -> None:
    assert decide_after_step(facts(has_tool_calls=True, awaits_approval=True)) is StopReason.REQUIRES_APPROVAL


def test_calls_that_ran_lead_to_another_step_so_the_model_reads_their_results() -> None:
    assert decide_after_step(facts(has_tool_calls=True)) is None


def test_a_terminal_tool_that_ran_stops_the_turn_by_tool_rule() -> None:
    assert decide_after_step(facts(has_tool_calls=True, terminal_tool_ran=True)) is StopReason.TOOL_RULE


@pytest.mark.parametrize(("truncations", "expected"), [(1, None), (MAX_TRUNCATION_CONTINUES, None)])
def test_a_cut_off_answer_is_continued_a_bounded_number_of_times(truncations: int, expected: object) -> None:
    assert decide_after_step(facts(truncated=True, truncations=truncations)) is expected


def test_a_cut_off_answer_past_the_bound_ends_the_turn() -> None:
    stop = decide_after_step(facts(truncated=True, truncations=MAX_TRUNCATION_CONTINUES + 1))

    assert stop is StopReason.END_TURN


def test_the_step_limit_stops_a_turn_that_would_go_on() -> None:
    assert decide_after_step(facts(has_tool_calls=True, steps=10, max_steps=10)) is StopReason.MAX_STEPS


def test_the_step_limit_does_not_override_a_turn_that_ended_anyway() -> None:
    assert decide_after_step(facts(steps=10, max_steps=10)) is StopReason.END_TURN
    assert decide_after_step(facts(has_tool_calls=True, awaits_approval=True, steps=10, max_steps=10)) is (
        StopReason.REQUIRES_APPROVAL
    )


def test_the_notice_says_why_the_turn_goes_on() -> None:
    assert "cut off" in (step_notice(truncated=True, uncalled_required=()) or "")
    assert "['roll_dice']" in (step_notice(truncated=False, uncalled_required=("roll_dice",)) or "")
    assert step_notice(truncated=False, uncalled_required=()) is None


@pytest.mark.parametrize(
    ("reason", "status"),
    [
        (StopReason.END_TURN, "completed"),
        (StopReason.REQUIRES_APPROVAL, "completed"),
        (StopReason.MAX_STEPS, "completed"),
        (StopReason.TOOL_RULE, "completed"),
        (StopReason.NO_TOOL_CALL, "completed"),
        (StopReason.CANCELLED, "cancelled"),
        (StopReason.ERROR, "failed"),
        (StopReason.LLM_API_ERROR, "failed"),
        (StopReason.INVALID_LLM_RESPONSE, "failed"),
        (StopReason.INVALID_TOOL_CALL, "failed"),
    ],
)
def test_each_stop_reason_gives_one_run_status(reason: StopReason, status: str) -> None:
    assert reason.run_status == status
