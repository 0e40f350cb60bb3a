"""``/v1/conversations/{conv}/…``: a conversation is its own thread of the agent, sharing the agent's blocks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from agents import services
from agents.conversations.services import conversation_create
from agents.models import Agent, Block, Conversation, Message, Run, RunStatus
from tests.fake_llm.script import Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(cast) -> Agent:
    return services.agent_create(organization=cast.org_a, name="threads", model="demo/echo-1", include_base_tools=True)


@pytest.fixture
def conversation(agent) -> Conversation:
    return conversation_create(agent=agent, user=None)


def turn(text: str, **body: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": [{"type": "text", "text": text}]}], **body}


def sse(response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.content
    body = b"".join(response).decode()
    frames = [frame.removeprefix("data: ") for frame in body.split("\n\n") if frame.startswith("data: ")]
    assert frames[-1] == "[DONE]"
    return [json.loads(frame) for frame in frames[:-1]]


def say(api: APIClient, conversation: Conversation, text: str, **body: Any):
    return api.post(f"/v1/conversations/{conversation.public_id}/messages", turn(text, **body), format="json")


def texts(api: APIClient, path: str) -> list[str]:
    return [m["content"] for m in api.get(path).json() if m["message_type"] in ("user_message", "assistant_message")]


def user_texts(api: APIClient, path: str) -> list[Any]:
    return [m["content"] for m in api.get(path).json() if m["message_type"] == "user_message"]


def test_a_send_to_a_conversation_streams_and_stores_its_rows_in_its_thread(alice_api, agent, conversation):
    chunks = sse(say(alice_api, conversation, "hello thread"))

    run = Run.objects.get(agent=agent)
    assert chunks[0] == chunks[0] | {"message_type": "ping", "run_id": run.public_id}
    assert run.conversation_id == conversation.pk
    assert run.status == RunStatus.COMPLETED
    assert alice_api.get(f"/v1/runs/{run.public_id}").json()["conversation_id"] == conversation.public_id
    rows = Message.objects.filter(conversation=conversation).order_by("seq")
    assert [row.role for row in rows] == ["system", "user", "assistant"]
    conversation.refresh_from_db()
    assert conversation.last_message_at is not None


def test_the_conversation_listing_is_newest_first_with_its_system_message_last(alice_api, conversation):
    say(alice_api, conversation, "first", streaming=False)

    listed = alice_api.get(f"/v1/conversations/{conversation.public_id}/messages").json()
    ascending = alice_api.get(f"/v1/conversations/{conversation.public_id}/messages?order=asc").json()

    newest = Message.objects.filter(conversation=conversation).order_by("-seq").first()
    assert listed[-1]["message_type"] == "system_message"
    assert listed[0]["id"] == newest.public_id
    assert [m["id"] for m in ascending] == [m["id"] for m in reversed(listed)]


def test_two_conversations_keep_separate_histories_and_leave_the_default_thread_alone(alice_api, agent):
    one = conversation_create(agent=agent, user=None)
    two = conversation_create(agent=agent, user=None)
    default_before = alice_api.get(f"/v1/agents/{agent.public_id}/messages").json()

    say(alice_api, one, "about apples", streaming=False)
    say(alice_api, two, "about pears", streaming=False)

    assert user_texts(alice_api, f"/v1/conversations/{one.public_id}/messages") == ["about apples"]
    assert user_texts(alice_api, f"/v1/conversations/{two.public_id}/messages") == ["about pears"]
    assert alice_api.get(f"/v1/agents/{agent.public_id}/messages").json() == default_before
    assert alice_api.get(f"/v1/conversations/default/messages?agent_id={agent.public_id}").json() == default_before


def test_a_block_edited_in_one_conversation_is_seen_by_the_other(alice_api, agent):
    one = conversation_create(agent=agent, user=None)
    two = conversation_create(agent=agent, user=None)

    say(alice_api, one, "call memory_insert with label=human new_str='Likes green tea.'", streaming=False)

    human = Block.objects.get(agent_blocks__agent=agent, label="human")
    assert "Likes green tea." in human.value
    prompt = alice_api.post(f"/v1/conversations/{two.public_id}/recompile", {}, format="json").json()
    assert "Likes green tea." in prompt


def test_a_busy_conversation_is_lettas_409_while_other_threads_run(alice_api, cast, agent):
    busy = conversation_create(agent=agent, user=None)
    free = conversation_create(agent=agent, user=None)
    holder = Run.objects.create(organization=cast.org_a, agent=agent, conversation=busy, background=True)

    refused = say(alice_api, busy, "hi", streaming=False)
    other = say(alice_api, free, "hi", streaming=False)
    default = alice_api.post(
        "/v1/conversations/default/messages", turn("hi", streaming=False, agent_id=agent.public_id), format="json"
    )

    assert refused.status_code == 409
    assert refused.json() == {
        "detail": (
            f"CONFLICT: Cannot send a new message: Another request (run_id={holder.public_id}) is currently "
            "being processed for this conversation. Please wait for it to complete."
        ),
        "run_id": holder.public_id,
    }
    assert (other.status_code, default.status_code) == (200, 200)


def test_cancel_of_a_conversation_cancels_only_its_runs(alice_api, cast, agent):
    one = conversation_create(agent=agent, user=None)
    two = conversation_create(agent=agent, user=None)
    mine = Run.objects.create(organization=cast.org_a, agent=agent, conversation=one, background=True)
    theirs = Run.objects.create(organization=cast.org_a, agent=agent, conversation=two, background=True)

    response = alice_api.post(f"/v1/conversations/{one.public_id}/cancel")

    assert response.json() == {mine.public_id: "cancelled"}
    theirs.refresh_from_db()
    assert theirs.status == RunStatus.QUEUED
    again = alice_api.post(f"/v1/conversations/{one.public_id}/cancel")
    assert (again.status_code, again.json()) == (
        409,
        {"detail": f"CONFLICT: No active runs to cancel for conversation {one.public_id}"},
    )


def test_stream_resumes_a_conversations_run_by_run_id(alice_api, conversation):
    say(alice_api, conversation, "hello", streaming=False)
    run = Run.objects.get(conversation=conversation)

    chunks = sse(
        alice_api.post(f"/v1/conversations/{conversation.public_id}/stream", {"run_id": run.public_id}, format="json")
    )

    assert [c["message_type"] for c in chunks if c["message_type"] == "assistant_message"] == ["assistant_message"]


def test_compact_summarizes_the_conversations_window_only(alice_api, agent, conversation):
    for n in range(4):
        say(alice_api, conversation, f"message {n}", streaming=False)
    default_rows = Message.objects.filter(agent=agent, conversation__isnull=True).count()

    answer = alice_api.post(f"/v1/conversations/{conversation.public_id}/compact", {}, format="json").json()

    assert answer["num_messages_after"] < answer["num_messages_before"] == 9
    assert Message.objects.filter(agent=agent, conversation__isnull=True).count() == default_rows
    conversation.refresh_from_db()
    assert conversation.context_summary_seq is not None


def test_preview_raw_payload_shows_the_conversations_window(alice_api, conversation):
    say(alice_api, conversation, "remember the walrus", streaming=False)
    fresh = conversation_create(agent=conversation.agent, user=None)

    def preview(thread: Conversation) -> dict[str, Any]:
        path = f"/v1/conversations/{thread.public_id}/messages/preview-raw-payload"
        return alice_api.post(path, turn("next"), format="json").json()

    assert (preview(conversation)["turns"], preview(fresh)["turns"]) == (3, 1)
    assert Message.objects.filter(conversation=conversation).count() == 3


def test_a_deleted_conversation_takes_no_more_messages(alice_api, conversation):
    alice_api.delete(f"/v1/conversations/{conversation.public_id}")

    assert say(alice_api, conversation, "hello", streaming=False).status_code == 404


def test_fork_copies_the_window_behind_a_fresh_system_row_and_keeps_the_model(alice_api, agent, conversation):
    alice_api.patch(
        f"/v1/conversations/{conversation.public_id}", {"summary": "s", "model": "demo/echo-1"}, format="json"
    )
    say(alice_api, conversation, "before the fork", streaming=False)

    fork = alice_api.post(f"/v1/conversations/{conversation.public_id}/fork").json()
    say(alice_api, Conversation.objects.get(pk=fork["id"].removeprefix("conv-")), "only in the fork", streaming=False)

    assert (fork["model"], fork["summary"]) == ("demo/echo-1", None)
    assert user_texts(alice_api, f"/v1/conversations/{fork['id']}/messages?order=asc") == [
        "before the fork",
        "only in the fork",
    ]
    assert user_texts(alice_api, f"/v1/conversations/{conversation.public_id}/messages") == ["before the fork"]


def test_forking_default_copies_the_agents_window(alice_api, agent):
    alice_api.post(f"/v1/agents/{agent.public_id}/messages", turn("in the default thread"), format="json")

    fork = alice_api.post(f"/v1/conversations/default/fork?agent_id={agent.public_id}").json()

    assert "in the default thread" in user_texts(alice_api, f"/v1/conversations/{fork['id']}/messages")
    assert fork["agent_id"] == agent.public_id


@pytest.fixture
def on_the_fake(settings, fake_llm):
    """Anthropic and OpenAI handles answer from the fake model server."""
    settings.ANTHROPIC_BASE_URL, settings.ANTHROPIC_API_KEY = fake_llm.url, "sk-ant-test"
    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = fake_llm.base_url_openai, "sk-test"
    return fake_llm


def test_a_conversation_with_its_own_model_calls_that_model_with_its_settings(alice_api, agent, on_the_fake):
    claude = services.agent_create(organization=agent.organization, name="claude", model="anthropic/claude-sonnet-4-6")
    own = conversation_create(
        agent=claude,
        user=None,
        model="openai/gpt-4o-mini",
        model_settings={"provider_type": "openai", "temperature": 0.25, "max_output_tokens": 321},
    )

    answer = say(alice_api, own, "which model?", streaming=False)
    default = alice_api.post(f"/v1/agents/{claude.public_id}/messages", turn("and here?"), format="json")

    assert (answer.status_code, default.status_code) == (200, 200)
    first, second = on_the_fake.requests[-2:]
    assert (first.protocol, first.body["model"]) == ("openai", "gpt-4o-mini")
    assert first.body["temperature"] == 0.25
    assert 321 in (first.body.get("max_completion_tokens"), first.body.get("max_tokens"))
    assert (second.protocol, second.body["model"]) == ("anthropic", "claude-sonnet-4-6")
    step = Run.objects.get(conversation=own).steps.get()
    assert step.model == "openai/gpt-4o-mini"


def test_a_conversations_model_settings_without_a_model_change_nothing(alice_api, agent, on_the_fake):
    claude = services.agent_create(organization=agent.organization, name="claude", model="anthropic/claude-sonnet-4-6")
    own = conversation_create(agent=claude, user=None, model_settings={"provider_type": "openai", "temperature": 0.25})

    assert say(alice_api, own, "which model?", streaming=False).status_code == 200

    sent = on_the_fake.requests[-1]
    assert (sent.protocol, sent.body["model"]) == ("anthropic", "claude-sonnet-4-6")
    assert sent.body.get("temperature") != 0.25


def test_a_conversations_isolated_block_is_its_own_in_the_prompt_and_for_memory_tools(alice_api, cast, on_the_fake):
    claude = services.agent_create(
        organization=cast.org_a, name="claude", model="anthropic/claude-sonnet-4-6", include_base_tools=True
    )
    own = conversation_create(agent=claude, user=None, isolated_block_labels=["human"])
    shared = Block.objects.get(agent_blocks__agent=claude, label="human")
    before = shared.value
    on_the_fake.script(
        Reply(tool_calls=[("memory_insert", {"label": "human", "new_str": "Alice prefers green tea."})]),
        Reply(text="Noted."),
        Reply(text="Still noted."),
        Reply(text="Who?"),
    )

    assert say(alice_api, own, "remember that I like green tea", streaming=False).status_code == 200
    assert say(alice_api, own, "what do I like?", streaming=False).status_code == 200
    default = alice_api.post(f"/v1/agents/{claude.public_id}/messages", turn("what do I like?"), format="json")

    assert default.status_code == 200
    shared.refresh_from_db()
    assert shared.value == before
    (copy,) = own.isolated_blocks.all()
    assert "Alice prefers green tea." in copy.value
    in_conversation, in_default = on_the_fake.requests[-2:]
    assert "Alice prefers green tea." in json.dumps(in_conversation.body["system"])
    assert "Alice prefers green tea." not in json.dumps(in_default.body["system"])
