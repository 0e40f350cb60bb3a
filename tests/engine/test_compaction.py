"""Keeping the context within the window: the plan (pure), and compactions inside turns."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest
from asgiref.sync import sync_to_async

from agents.engine.collaborators import TurnCollaborators
from agents.engine.compaction import SUMMARY_NOTICE, is_summary, plan_compaction, summary_of
from agents.engine.context import ModelSettings
from agents.engine.events import MessageEvent
from agents.engine.inputs import UserInput
from agents.engine.loop import start_turn
from agents.engine.rules import ToolRules
from agents.engine.store import MessageSnapshot
from agents.llm.base import LLMContextWindowExceeded, LLMEvent, LLMOverloaded, LLMRequest
from agents.llm.demo import DemoClient
from agents.llm.tokens import request_tokens
from agents.models import Agent, Message, Run
from agents.runs.store import DjangoConversationStore
from tests.engine.test_turn_loop import finished
from tests.factories import append_history
from tests.fakes import reply
from tools.base import ToolContext

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

WORDS = "the quick brown fox jumps over the lazy dog " * 6


def row(seq: int, role: str, text: str = "", **fields: object) -> MessageSnapshot:
    content = [{"type": "text", "text": text}] if text else []
    return MessageSnapshot(id=uuid.uuid4(), agent_id=None, seq=seq, role=role, content=content, **fields)  # type: ignore[arg-type]


def conversation(turns: int) -> list[MessageSnapshot]:
    rows = [row(0, "system", "You are helpful.")]
    for turn in range(turns):
        seq = 1 + 4 * turn
        call = {"id": f"c{turn}", "name": "roll_dice", "arguments": "{}", "requires_approval": False}
        rows += [
            row(seq, "user", f"question {turn} {WORDS}"),
            row(seq + 1, "assistant", "Let me roll.", tool_calls=[call]),
            row(seq + 2, "tool", tool_returns=[{"tool_call_id": f"c{turn}", "name": "roll_dice", "tool_return": "4"}]),
            row(seq + 3, "assistant", f"answer {turn} {WORDS}"),
        ]
    return rows


def test_the_plan_evicts_about_the_share_asked_from_the_oldest_rows() -> None:
    rows = conversation(10)

    plan = plan_compaction(rows, evict_share=0.3)

    assert plan is not None
    evicted = [r.seq for r in plan.evicted]
    assert evicted == list(range(1, plan.keep_from_seq))
    assert 0.25 <= len(evicted) / (len(rows) - 1) <= 0.45


@pytest.mark.parametrize("share", [0.05, 0.3, 0.5, 0.9, 1.0])
def test_a_cut_never_separates_a_call_from_its_result_nor_evicts_the_current_input(share: float) -> None:
    rows = conversation(6)

    plan = plan_compaction(rows, evict_share=share)

    assert plan is not None
    kept_first = next(r for r in rows if r.seq == plan.keep_from_seq)
    assert kept_first.role in ("user", "assistant")
    assert plan.evicted[-1].role != "assistant" or not plan.evicted[-1].tool_calls
    current_input = max(r.seq for r in rows if r.role == "user")
    assert plan.keep_from_seq <= current_input


def test_nothing_can_be_evicted_from_a_conversation_that_is_only_the_current_turn() -> None:
    rows = [row(0, "system", "sys"), row(1, "user", WORDS)]

    assert plan_compaction(rows, evict_share=0.3) is None


def test_a_previous_summary_is_summarized_again_not_evicted_as_a_message() -> None:
    summary = row(40, "user", json.dumps({"type": "system_alert", "message": SUMMARY_NOTICE + "Earlier: dice."}))
    summary = replace(summary, metadata={"kind": "summary"})
    rows = [rows_ for rows_ in conversation(5)]
    rows.insert(1, summary)

    plan = plan_compaction(rows, evict_share=0.5)

    assert plan is not None
    assert plan.previous_summary == summary
    assert summary not in plan.evicted
    assert summary_of(summary) == "Earlier: dice."


@sync_to_async
def add_history(agent: Agent, turns: int) -> None:
    append_history(agent, 2 * turns, lambda index: f"message {index} {WORDS}")


async def test_a_turn_that_would_pass_the_window_compacts_first_and_the_model_gets_a_request_that_fits(harness):
    harness.model_settings = {"context_window": 1500}
    await add_history(harness.agent, 20)

    events = await harness.turn([UserInput("What did we talk about?")], [reply("A summary."), reply("Dice.")])

    summary_request, turn_request = harness.llm.requests
    assert summary_request.purpose == "summary"
    assert "message 0" in summary_request.turns[0].text
    assert request_tokens(turn_request) <= 1500 * 0.9
    assert "A summary." in turn_request.turns[0].text
    assert turn_request.turns[-1].text == "What did we talk about?"
    assert finished(events).stop_reason == "end_turn"
    assert any(isinstance(e, MessageEvent) and is_summary(e.message) for e in events)
    stored = await harness.rows()
    assert len([r for r in stored if r.metadata.get("kind") == "summary"]) == 1
    assert len(stored) == 2 + 40 + 1 + 1 + 1  # nothing is deleted: evicted rows stay in the history


async def test_a_prompt_too_long_error_leads_to_a_compaction_and_a_successful_retry(harness):
    await add_history(harness.agent, 6)
    overflow = LLMContextWindowExceeded("prompt is too long: 210000 tokens > 200000 maximum", status_code=400)

    events = await harness.turn([UserInput("Go on.")], [overflow, reply("Summary."), reply("Done.")])

    assert [r.purpose for r in harness.llm.requests] == ["turn", "summary", "turn"]
    assert finished(events).stop_reason == "end_turn"


async def test_a_second_overflow_after_the_compaction_fails_the_run_with_the_providers_error(harness):
    await add_history(harness.agent, 6)
    overflow = LLMContextWindowExceeded("prompt is too long", status_code=400)

    events = await harness.turn([UserInput("Go on.")], [overflow, reply("Summary."), overflow])

    assert finished(events).stop_reason == "invalid_llm_response"
    assert "prompt is too long" in (finished(events).error or "")


@pytest.mark.parametrize(
    ("summary", "stop_reason", "error"),
    [
        (
            LLMOverloaded("Overloaded", status_code=529),
            "llm_api_error",
            "Summarizing the conversation failed: Overloaded",
        ),
        (reply("   "), "invalid_llm_response", "The model returned an empty summary."),
    ],
    ids=["model-error", "empty-summary"],
)
async def test_a_summary_that_fails_ends_the_turn_with_why_and_the_context_unchanged(
    harness, summary, stop_reason: str, error: str
):
    harness.model_settings = {"context_window": 1500}
    await add_history(harness.agent, 20)
    agent = await Agent.objects.aget(pk=harness.agent.pk)
    before = [m.seq async for m in Message.objects.in_context(agent)]

    events = await harness.turn([UserInput("What did we talk about?")], [summary])

    assert (finished(events).stop_reason, finished(events).error) == (stop_reason, error)
    assert [r.purpose for r in harness.llm.requests] == ["summary"]
    agent = await Agent.objects.aget(pk=harness.agent.pk)
    assert [m.seq async for m in Message.objects.in_context(agent)] == [*before, before[-1] + 1]


async def test_the_context_stays_a_system_row_the_summary_and_a_contiguous_run_of_rows(harness):
    harness.model_settings = {"context_window": 1500}
    await add_history(harness.agent, 20)
    await harness.turn([UserInput("First.")], [reply("Summary one."), reply("One.")])
    await add_history(harness.agent, 20)

    await harness.turn([UserInput("Second.")], [reply("Summary two."), reply("Two.")])

    agent = await Agent.objects.aget(pk=harness.agent.pk)
    context = [m async for m in Message.objects.in_context(agent)]
    assert context[0].role == "system"
    assert summary_of(context[1].snapshot()) == "Summary two."
    tail = [m.seq for m in context[2:]]
    stored = [m.seq async for m in Message.objects.filter(agent=agent, seq__gte=tail[0]).order_by("seq")]
    assert tail == [seq for seq in stored if seq != context[1].seq]


class RecordingDemo:
    """The offline demo model, remembering every request it received."""

    provider = "demo"

    def __init__(self) -> None:
        self.inner = DemoClient(token_delay=0)
        self.requests: list[LLMRequest] = []

    async def generate(self, request: LLMRequest, *, stream: bool) -> AsyncIterator[LLMEvent]:
        self.requests.append(request)
        async for event in self.inner.generate(request, stream=stream):
            yield event


async def test_three_hundred_turns_with_a_four_thousand_token_window_all_end_their_turn_and_every_request_fits(
    harness,
):
    demo = RecordingDemo()
    settings = ModelSettings(handle="demo/echo-1", model="echo-1", context_window=4000)
    stops = []

    for turn in range(300):
        run = await Run.objects.acreate(organization_id=harness.agent.organization_id, agent=harness.agent)
        collab = TurnCollaborators(
            store=DjangoConversationStore(agent=harness.agent, run=run),
            llm=demo,
            tool_runner=harness.runner,
            tools=harness.tools,
            settings=settings,
            rules=ToolRules.from_json([]),
            tool_context=ToolContext(organization_id=harness.agent.organization_id, agent_id=harness.agent.id),
        )
        opened = await start_turn(collab, [UserInput(f"Turn {turn}: tell me something about {WORDS}")])
        stops.append(finished([event async for event in opened.events()]).stop_reason)

    assert set(stops) == {"end_turn"}
    assert max(request_tokens(request) for request in demo.requests) <= 4000
    summaries = [request for request in demo.requests if request.purpose == "summary"]
    assert len(summaries) >= 5
    stored = await Message.objects.filter(agent=harness.agent).acount()
    assert stored == 2 + 300 * 2 + len(summaries)  # every message is still listed
