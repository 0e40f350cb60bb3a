"""``/v1/conversations/`` and ``/v1/conversations/{conv}``: Letta 0.16.8's conversation resource."""

from __future__ import annotations

import uuid

import pytest

from agents import services
from agents.models import Agent, Block, Conversation, Message

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(cast) -> Agent:
    return services.agent_create(organization=cast.org_a, name="threads", model="demo/echo-1")


def create(api, agent: Agent, **body):
    response = api.post(f"/v1/conversations/?agent_id={agent.public_id}", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_create_answers_lettas_conversation_and_stores_only_a_system_row(alice_api, agent):
    answer = create(alice_api, agent, summary="planning")

    assert answer["id"].startswith("conv-")
    assert uuid.UUID(answer["id"].removeprefix("conv-")).version == 4
    assert answer["agent_id"] == agent.public_id
    assert answer["summary"] == "planning"
    assert answer["in_context_message_ids"] == []
    assert answer["isolated_block_ids"] == []
    assert (answer["model"], answer["model_settings"], answer["last_message_at"]) == (None, None, None)
    conversation = Conversation.objects.get()
    assert list(Message.objects.filter(conversation=conversation).values_list("seq", "role")) == [(0, "system")]


def test_create_without_agent_id_is_a_422_and_an_unknown_agent_a_404(alice_api):
    assert alice_api.post("/v1/conversations/", {}, format="json").status_code == 422
    missing = alice_api.post(f"/v1/conversations/?agent_id=agent-{uuid.uuid4()}", {}, format="json")
    assert missing.status_code == 404


def test_a_model_without_a_provider_is_lettas_400(alice_api, agent):
    response = alice_api.post(f"/v1/conversations/?agent_id={agent.public_id}", {"model": "gpt"}, format="json")

    assert response.status_code == 400
    assert response.json() == {
        "detail": "INVALID_ARGUMENT: The model handle should be in the format provider/model-name"
    }


def test_isolated_block_labels_copy_the_agents_blocks(alice_api, agent):
    answer = create(alice_api, agent, isolated_block_labels=["human"])

    (copy_id,) = answer["isolated_block_ids"]
    copy = Block.objects.get(pk=copy_id.removeprefix("block-"))
    original = Block.objects.get(agent_blocks__agent=agent, label="human")
    assert (copy.label, copy.value) == (original.label, original.value)
    assert copy.pk != original.pk


def test_an_unknown_isolated_label_is_lettas_400(alice_api, agent):
    response = alice_api.post(
        f"/v1/conversations/?agent_id={agent.public_id}", {"isolated_block_labels": ["nope"]}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["detail"] == (
        f"INVALID_ARGUMENT: Block with label 'nope' not found on agent '{agent.public_id}'"
    )
    assert not Conversation.objects.exists()


def test_retrieve_gives_the_in_context_ids_system_first(alice_api, agent):
    conversation_id = create(alice_api, agent)["id"]

    answer = alice_api.get(f"/v1/conversations/{conversation_id}").json()

    system = Message.objects.get(conversation_id=conversation_id.removeprefix("conv-"))
    assert answer["in_context_message_ids"] == [system.public_id]


@pytest.mark.parametrize("path_id", ["default", "conv-123", "agent-1"])
def test_retrieve_update_delete_take_only_conv_uuid4_ids(alice_api, path_id):
    assert alice_api.get(f"/v1/conversations/{path_id}").status_code == 422
    assert alice_api.patch(f"/v1/conversations/{path_id}", {}, format="json").status_code == 422
    assert alice_api.delete(f"/v1/conversations/{path_id}").status_code == 422


def test_update_sets_given_fields_and_skips_nulls(alice_api, agent):
    conversation_id = create(alice_api, agent, summary="first")["id"]

    renamed = alice_api.patch(f"/v1/conversations/{conversation_id}", {"summary": "second"}, format="json").json()
    kept = alice_api.patch(
        f"/v1/conversations/{conversation_id}", {"summary": None, "model": "openai/gpt-4o"}, format="json"
    ).json()

    assert renamed["summary"] == "second"
    assert (kept["summary"], kept["model"]) == ("second", "openai/gpt-4o")


def test_delete_answers_null_and_hides_the_conversation(alice_api, agent):
    conversation_id = create(alice_api, agent, isolated_block_labels=["human"])["id"]

    response = alice_api.delete(f"/v1/conversations/{conversation_id}")

    assert (response.status_code, response.json()) == (200, None)
    assert alice_api.get(f"/v1/conversations/{conversation_id}").status_code == 404
    assert alice_api.get(f"/v1/conversations/?agent_id={agent.public_id}").json() == []
    assert Block.objects.filter(label="human").count() == 1
    assert alice_api.delete(f"/v1/conversations/{conversation_id}").status_code == 404


def test_list_is_newest_first_and_pages_with_after(alice_api, agent):
    ids = [create(alice_api, agent, summary=f"c{n}")["id"] for n in range(3)]

    first = alice_api.get(f"/v1/conversations/?agent_id={agent.public_id}&limit=2").json()
    rest = alice_api.get(f"/v1/conversations/?agent_id={agent.public_id}&after={first[-1]['id']}").json()
    ascending = alice_api.get(f"/v1/conversations/?agent_id={agent.public_id}&order=asc").json()

    assert [c["id"] for c in first] == [ids[2], ids[1]]
    assert [c["id"] for c in rest] == [ids[0]]
    assert [c["id"] for c in ascending] == ids


def test_list_orders_by_last_message_at_nulls_last_and_searches_summaries(alice_api, agent):
    old, new, never = (create(alice_api, agent, summary=name)["id"] for name in ("old", "new", "never"))
    for conversation_id, when in ((old, "2026-01-01T00:00:00Z"), (new, "2026-02-01T00:00:00Z")):
        alice_api.patch(f"/v1/conversations/{conversation_id}", {"last_message_at": when}, format="json")

    listed = alice_api.get("/v1/conversations/?order_by=last_message_at").json()
    found = alice_api.get("/v1/conversations/?summary_search=ne").json()

    assert [c["id"] for c in listed] == [new, old, never]
    assert {c["id"] for c in found} == {new, never}


def test_an_unknown_after_cursor_is_a_404(alice_api, agent):
    create(alice_api, agent)

    assert alice_api.get(f"/v1/conversations/?after=conv-{uuid.uuid4()}").status_code == 404
