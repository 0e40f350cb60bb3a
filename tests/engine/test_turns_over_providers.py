"""The loop's rules through the real Anthropic and OpenAI SDKs, against our fake model server.

Each scenario runs on both protocols, streamed and not, with the real sandboxed
tool runner and the real database store.
"""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from agents import services
from agents.engine.events import MessageEvent, RunFinishedEvent
from agents.engine.inputs import ApprovalInput, ApprovalItem, UserInput
from agents.models import Message, Run, Step
from agents.runs.turns import TurnSetup, open_turn
from tests.factories import OrganizationFactory
from tests.fake_llm.script import Fault, Reply
from tests.tool_sources import DICE_SOURCE, SECRET_SOURCE
from tools.services import tool_upsert_from_source

pytestmark = pytest.mark.django_db(transaction=True)

HANDLES = ["anthropic/claude-sonnet-4-5-20250929", "openai/gpt-4.1-mini"]


@pytest.fixture(
    params=[(h, s) for h in HANDLES for s in (False, True)],
    ids=lambda p: f"{p[0].split('/')[0]}-{'stream' if p[1] else 'whole'}",
)
def setup(request, settings, fake_llm):
    handle, stream = request.param
    settings.ANTHROPIC_BASE_URL = fake_llm.url
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    settings.OPENAI_BASE_URL = fake_llm.base_url_openai
    settings.OPENAI_API_KEY = "sk-test"
    organization = OrganizationFactory()
    dice = tool_upsert_from_source(organization=organization, source_code=DICE_SOURCE)
    secret = tool_upsert_from_source(
        organization=organization, source_code=SECRET_SOURCE, default_requires_approval=True
    )
    agent = services.agent_create(
        organization=organization,
        name="a",
        model=handle,
        tool_ids=[dice.public_id, secret.public_id],
        parallel_tool_calls=True,
    )
    return agent, stream, fake_llm


async def turn(agent, turn_input, *, stream: bool) -> list:
    run = await Run.objects.acreate(organization_id=agent.organization_id, agent=agent)
    opened = await open_turn(TurnSetup(run=run, turn_input=turn_input, stream_tokens=stream))
    return [event async for event in opened.events()]


def finished(events) -> RunFinishedEvent:
    assert isinstance(events[-1], RunFinishedEvent)
    return events[-1]


def rows(events, role: str) -> list:
    return [e.message for e in events if isinstance(e, MessageEvent) and e.message.role == role]


async def test_a_text_turn_ends_the_turn_with_the_providers_usage(setup):
    agent, stream, fake = setup
    fake.script(Reply(text="Hello there.", reasoning="Greet them.", usage=(120, 7)))

    events = await turn(agent, [UserInput("hi")], stream=stream)

    assert finished(events).stop_reason == "end_turn"
    assert (finished(events).usage.prompt_tokens, finished(events).usage.completion_tokens) == (120, 7)
    assert finished(events).usage.estimated is False
    assert rows(events, "assistant")[0].text == "Hello there."
    step = await Step.objects.aget(run_id=events[-1].run_id)
    assert (step.prompt_tokens, step.completion_tokens, step.usage_estimated) == (120, 7, False)


async def test_a_gated_call_waits_then_runs_in_the_sandbox_and_the_model_reads_its_result(setup):
    agent, stream, fake = setup
    fake.script(
        Reply(text="Checking.", tool_calls=[("get_secret_code", {"input_text": "hi"})]), Reply(text="It is code-hi.")
    )

    events = await turn(agent, [UserInput("the code please")], stream=stream)
    assert finished(events).stop_reason == "requires_approval"
    call = rows(events, "assistant")[0].tool_calls[0]
    assert call["requires_approval"] is True

    events = await turn(
        agent,
        ApprovalInput(approvals=[ApprovalItem(approve=True, tool_call_id=call["id"])]),
        stream=stream,
    )

    assert finished(events).stop_reason == "end_turn"
    assert rows(events, "tool")[0].tool_returns[0]["tool_return"] == "code-hi"
    assert "code-hi" in json.dumps(fake.last_request.body)


async def test_nothing_of_a_parallel_batch_runs_until_every_gated_call_is_answered(setup):
    agent, stream, fake = setup
    fake.script(
        Reply(text="Both.", tool_calls=[("roll_dice", {"num_sides": 6}), ("get_secret_code", {"input_text": "x"})]),
        Reply(text="Done."),
    )

    events = await turn(agent, [UserInput("both")], stream=stream)

    assert finished(events).stop_reason == "requires_approval"
    assert rows(events, "tool") == []
    calls = rows(events, "assistant")[0].tool_calls
    gated = next(c for c in calls if c["requires_approval"])
    events = await turn(
        agent,
        ApprovalInput(approvals=[ApprovalItem(approve=False, tool_call_id=gated["id"], reason="no")]),
        stream=stream,
    )
    returns = rows(events, "tool")[0].tool_returns
    assert [r["status"] for r in returns] == ["error", "success"]
    assert returns[0]["tool_return"] == "Error: request to call tool denied. User reason: no"


@pytest.mark.parametrize(
    ("fault", "stop_reason"),
    [
        (Fault.malformed_json(), "invalid_llm_response"),
        (Fault.empty_completion(), "invalid_llm_response"),
        (Fault.no_terminal_event(), "invalid_llm_response"),
        (Fault.http(400, "bad request"), "llm_api_error"),
        (Fault.unauthorized(), "llm_api_error"),
    ],
    ids=["malformed", "empty", "no-terminal-event", "http-400", "http-401"],
)
async def test_model_failures_end_the_run_cleanly_and_the_next_message_works(setup, fault, stop_reason):
    agent, stream, fake = setup
    fake.script(fault, Reply(text="Back again."))

    events = await turn(agent, [UserInput("hi")], stream=stream)

    assert finished(events).stop_reason == stop_reason
    assert finished(events).error
    assert await Message.objects.filter(agent=agent, role="assistant").acount() == 0
    events = await turn(agent, [UserInput("hello?")], stream=stream)
    assert finished(events).stop_reason == "end_turn"


async def test_a_connection_dropped_mid_answer_is_retried_only_if_nothing_was_streamed_yet(setup):
    agent, stream, fake = setup
    fake.script(Fault.drop_mid_stream("This answer is cu"), Reply(text="Recovered."))

    events = await turn(agent, [UserInput("hi")], stream=stream)

    assistant_rows = [m async for m in Message.objects.filter(agent=agent, role="assistant")]
    if stream:
        # Deltas already reached the client: no retry, no half-written row, the next message works.
        assert finished(events).stop_reason in {"llm_api_error", "invalid_llm_response"}
        assert assistant_rows == []
        assert finished(await turn(agent, [UserInput("again")], stream=stream)).stop_reason == "end_turn"
    else:
        assert finished(events).stop_reason == "end_turn"
        assert [r.content[-1]["text"] for r in assistant_rows] == ["Recovered."]


async def test_a_length_cut_keeps_the_partial_answer_and_continues(setup):
    agent, stream, fake = setup
    fake.script(Reply(text="The first half", finish_reason="length"), Reply(text=" and the rest."))

    events = await turn(agent, [UserInput("write")], stream=stream)

    assert finished(events).stop_reason == "end_turn"
    assert [r.text for r in rows(events, "assistant")] == ["The first half", " and the rest."]
    assert "cut off" in json.dumps(fake.last_request.body)


async def test_a_content_filter_stop_is_an_error(setup):
    agent, stream, fake = setup
    fake.script(Reply(text="", finish_reason="content_filter"))

    events = await turn(agent, [UserInput("hi")], stream=stream)

    assert finished(events).stop_reason == "invalid_llm_response"
    assert "content filter" in finished(events).error


async def test_content_without_a_finish_reason_counts_as_finished(setup):
    agent, stream, fake = setup
    fake.script(Reply(text="No finish reason here.", finish_reason=None))

    events = await turn(agent, [UserInput("hi")], stream=stream)

    assert finished(events).stop_reason == "end_turn"


async def test_missing_usage_is_estimated_and_marked(setup):
    agent, stream, fake = setup
    fake.script(Reply(text="No usage.", usage=None))

    events = await turn(agent, [UserInput("hi")], stream=stream)

    assert finished(events).usage.estimated is True
    assert finished(events).usage.total_tokens > 0
    run = await sync_to_async(Run.objects.get)(pk=events[-1].run_id)
    assert run.total_tokens == finished(events).usage.total_tokens


async def test_a_prompt_too_long_error_mid_turn_compacts_and_the_retry_succeeds(setup):
    agent, stream, fake = setup
    for index in range(4):
        fake.script(Reply(text=f"Answer {index}."))
        assert finished(await turn(agent, [UserInput(f"Question {index}")], stream=stream)).stop_reason == "end_turn"
    fake.script(Fault.prompt_too_long(), Reply(text="Earlier: four questions."), Reply(text="Still here."))

    events = await turn(agent, [UserInput("Are you still there?")], stream=stream)

    assert finished(events).stop_reason == "end_turn"
    assert rows(events, "assistant")[-1].text == "Still here."
    bodies = [request.body for request in fake.requests[-3:]]
    assert "Question 0" in json.dumps(bodies[1])  # the summary call reads the evicted turns
    assert "Earlier: four questions." in json.dumps(bodies[2])
    assert "Question 0" not in json.dumps(bodies[2])


@pytest.mark.parametrize("handle", HANDLES, ids=lambda handle: handle.split("/")[0])
async def test_three_hundred_turns_in_a_four_thousand_token_window_through_the_real_sdks(handle, settings, fake_llm):
    settings.ANTHROPIC_BASE_URL = fake_llm.url
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    settings.OPENAI_BASE_URL = fake_llm.base_url_openai
    settings.OPENAI_API_KEY = "sk-test"
    agent = await sync_to_async(services.agent_create)(
        organization=await sync_to_async(OrganizationFactory)(), name="long", model=handle, context_window=4000
    )
    already = len(fake_llm.requests)

    stops = [
        finished(
            await turn(agent, [UserInput(f"Turn {index}: " + "tell me about owls " * 12)], stream=False)
        ).stop_reason
        for index in range(300)
    ]

    assert set(stops) == {"end_turn"}
    bodies = [request.body for request in fake_llm.requests[already:]]
    assert max(len(json.dumps(body)) for body in bodies) / 4 <= 4000  # about four characters a token
    assert await Message.objects.filter(agent=agent).acount() >= 2 + 2 * 300
    assert await Message.objects.filter(agent=agent, metadata__kind="summary").acount() >= 5


async def test_a_silent_model_ends_the_run_within_its_timeout_and_the_next_message_works(setup, settings):
    agent, stream, fake = setup
    settings.LLM_FIRST_BYTE_TIMEOUT = 0.3
    fake.script(Reply(text="Too late.", delay=2), Reply(text="Back again."))

    events = await turn(agent, [UserInput("hi")], stream=stream)

    assert finished(events).stop_reason == "llm_api_error"
    assert "LLM_FIRST_BYTE_TIMEOUT" in (finished(events).error or "")
    run = await Run.objects.aget(id=finished(events).run_id)
    assert run.status == "failed"
    events = await turn(agent, [UserInput("hello?")], stream=stream)
    assert finished(events).stop_reason == "end_turn"
