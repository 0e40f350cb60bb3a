"""``/v1/agents``: create, list, retrieve, modify, delete, tools and the approval override."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from agents import services
from agents.models import Agent, Message
from tests.conftest import Cast
from tests.factories import AgentFactory, AgentToolFactory, ToolFactory
from tools.models import AgentTool, Tool

pytestmark = pytest.mark.django_db

SEED_AGENT = {
    "name": "approval_test_agent",
    "tool_rules": [],
    "tags": ["approval_test"],
    "agent_type": "letta_v1_agent",
    "include_base_tools": False,
    "include_base_tool_rules": False,
    "model": "anthropic/claude-sonnet-4-5-20250929",
    "embedding": "openai/text-embedding-3-small",
}


@pytest.fixture
def secret_tool(cast: Cast) -> Tool:
    return ToolFactory(organization=cast.org_a, name="get_secret_code_tool", default_requires_approval=True)


@pytest.fixture
def dice_tool(cast: Cast) -> Tool:
    return ToolFactory(organization=cast.org_a, name="roll_dice_tool")


@pytest.fixture
def agent(cast: Cast) -> Agent:
    return AgentFactory(organization=cast.org_a, name="helper", tags=["a"])


def test_it_creates_the_seed_agent_like_letta(
    alice_api: APIClient, cast: Cast, secret_tool: Tool, dice_tool: Tool
) -> None:
    response = alice_api.post(
        "/v1/agents/", {**SEED_AGENT, "tool_ids": [secret_tool.public_id, dice_tool.public_id]}, format="json"
    )

    assert response.status_code == 200
    state = response.json()
    agent = Agent.objects.get()
    assert state["id"] == agent.public_id
    assert agent.organization == cast.org_a
    assert agent.created_by == cast.alice
    assert state["tool_rules"] == [
        {"tool_name": "get_secret_code_tool", "type": "requires_approval", "prompt_template": None}
    ]
    assert {t["name"] for t in state["tools"]} == {"get_secret_code_tool", "roll_dice_tool"}
    assert state["message_ids"] == [m.public_id for m in Message.objects.in_context(agent)]
    assert len(state["message_ids"]) == 2
    llm = state["llm_config"]
    assert (llm["enable_reasoner"], llm["max_reasoning_tokens"], llm["max_tokens"]) == (True, 1024, 8192)
    assert (llm["temperature"], llm["context_window"], llm["parallel_tool_calls"]) == (
        0.7,
        128000,
        False,
    )  # the model's window, capped as Letta caps it
    assert llm["put_inner_thoughts_in_kwargs"] is False
    assert state["embedding_config"]["handle"] == "openai/text-embedding-3-small"
    assert state["tags"] == ["approval_test"]


def test_it_answers_the_same_with_and_without_a_trailing_slash(alice_api: APIClient) -> None:
    without_slash = alice_api.post("/v1/agents", {"name": "x"}, format="json")

    assert without_slash.status_code == 200
    assert alice_api.get(f"/v1/agents/{without_slash.json()['id']}/").status_code == 200


def test_it_names_the_field_of_a_malformed_body(alice_api: APIClient) -> None:
    response = alice_api.post("/v1/agents/", {"tags": "not-a-list"}, format="json")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "tags"]
    assert not Agent.objects.exists()


def test_it_names_the_field_of_a_bad_tool_rule(alice_api: APIClient) -> None:
    response = alice_api.post("/v1/agents/", {"tool_rules": [{"tool_name": "t", "type": "nope"}]}, format="json")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "tool_rules", 0, "type"]


def test_it_answers_400_for_an_unknown_embedding(alice_api: APIClient) -> None:
    response = alice_api.post("/v1/agents/", {"embedding": "openai/nope"}, format="json")

    assert response.status_code == 400
    assert response.json() == {"detail": "INVALID_ARGUMENT: Embedding model nope is not supported by openai"}


def test_it_answers_400_naming_a_tool_id_of_another_org(alice_api: APIClient, cast: Cast) -> None:
    foreign = ToolFactory(organization=cast.org_b)

    response = alice_api.post("/v1/agents/", {"tool_ids": [foreign.public_id]}, format="json")

    assert response.status_code == 400
    assert foreign.public_id in response.json()["detail"]
    assert not Agent.objects.exists()


def test_it_retrieves_an_agent(alice_api: APIClient, agent: Agent) -> None:
    response = alice_api.get(f"/v1/agents/{agent.public_id}")

    assert response.status_code == 200
    assert response.json()["name"] == "helper"


def test_it_lists_agents_newest_first_and_filters_by_name_and_tags(alice_api: APIClient, cast: Cast) -> None:
    first = services.agent_create(organization=cast.org_a, name="one", tags=["x", "y"])
    second = services.agent_create(organization=cast.org_a, name="two", tags=["y"])
    third = services.agent_create(organization=cast.org_a, name="three", tags=["z"])

    def names(query: Any) -> list[str]:
        response = alice_api.get("/v1/agents/", query)
        assert response.status_code == 200
        return [a["name"] for a in response.json()]

    assert names({}) == ["three", "two", "one"]
    assert names({"name": "two"}) == ["two"]
    assert names({"tags": ["y"]}) == ["two", "one"]
    assert names({"tags": ["x", "z"]}) == ["three", "one"]
    assert names({"tags": ["x", "y"], "match_all_tags": "true"}) == ["one"]
    assert names({"limit": 2}) == ["three", "two"]
    assert names({"after": second.public_id}) == ["one"]
    assert names({"before": second.public_id}) == ["three"]
    assert names({"order": "asc", "after": first.public_id}) == ["two", "three"]
    assert names({"ascending": "true", "limit": 1}) == ["one"]
    assert third.public_id == alice_api.get("/v1/agents", {"limit": 1}).json()[0]["id"]


def test_it_lists_each_agent_with_its_own_in_context_messages(alice_api: APIClient, cast: Cast) -> None:
    agents = [services.agent_create(organization=cast.org_a, name=f"a{i}") for i in range(2)]

    states = {s["id"]: s for s in alice_api.get("/v1/agents/").json()}

    for agent in agents:
        expected = [m.public_id for m in Message.objects.in_context(agent)]
        assert states[agent.public_id]["message_ids"] == expected


def test_it_never_lists_agents_of_another_org(charlie_api: APIClient, agent: Agent, cast: Cast) -> None:
    own = services.agent_create(organization=cast.org_b, name="theirs")

    response = charlie_api.get("/v1/agents/")

    assert [a["id"] for a in response.json()] == [own.public_id]


def test_it_modifies_the_llm_config_like_the_seed_does(alice_api: APIClient, cast: Cast) -> None:
    created = alice_api.post("/v1/agents/", SEED_AGENT, format="json").json()

    response = alice_api.patch(
        f"/v1/agents/{created['id']}",
        {"llm_config": {**created["llm_config"], "parallel_tool_calls": True}},
        format="json",
    )

    assert response.status_code == 200
    assert response.json()["llm_config"] == {**created["llm_config"], "parallel_tool_calls": True}
    agent = Agent.objects.get()
    assert agent.parallel_tool_calls is True
    assert (agent.enable_reasoner, agent.max_reasoning_tokens) == (True, 1024)


def test_it_modifies_name_system_tags_and_metadata(alice_api: APIClient, agent: Agent) -> None:
    response = alice_api.patch(
        f"/v1/agents/{agent.public_id}",
        {"name": "renamed", "system": "Be kind.", "tags": ["t"], "metadata": {"k": 1}, "description": "d"},
        format="json",
    )

    assert response.status_code == 200
    agent.refresh_from_db()
    assert (agent.name, agent.system, agent.tags, agent.metadata, agent.description) == (
        "renamed",
        "Be kind.",
        ["t"],
        {"k": 1},
        "d",
    )
    assert response.json()["system"] == "Be kind."
    assert Message.objects.get(agent=agent, seq=0).content[0]["text"] == "Be kind."


def test_it_deletes_an_agent(alice_api: APIClient, agent: Agent) -> None:
    response = alice_api.delete(f"/v1/agents/{agent.public_id}")

    assert response.status_code == 200
    assert response.json() == {"message": f"Agent id={agent.public_id} successfully deleted"}
    assert not Agent.objects.filter(pk=agent.pk).exists()


def test_it_lists_attaches_and_detaches_tools(alice_api: APIClient, agent: Agent, dice_tool: Tool) -> None:
    attached = alice_api.patch(f"/v1/agents/{agent.public_id}/tools/attach/{dice_tool.public_id}")

    assert attached.status_code == 200
    assert [t["id"] for t in attached.json()["tools"]] == [dice_tool.public_id]
    assert [t["name"] for t in alice_api.get(f"/v1/agents/{agent.public_id}/tools").json()] == ["roll_dice_tool"]

    detached = alice_api.patch(f"/v1/agents/{agent.public_id}/tools/detach/{dice_tool.public_id}")

    assert detached.status_code == 200
    assert detached.json()["tools"] == []
    assert not AgentTool.objects.filter(agent=agent).exists()


def test_it_adds_the_approval_rule_when_attaching_a_tool_that_requires_approval(
    alice_api: APIClient, agent: Agent, secret_tool: Tool
) -> None:
    response = alice_api.patch(f"/v1/agents/{agent.public_id}/tools/attach/{secret_tool.public_id}")

    assert response.json()["tool_rules"] == [
        {"tool_name": "get_secret_code_tool", "type": "requires_approval", "prompt_template": None}
    ]


def test_it_turns_approval_off_and_on_with_modify_approval(
    alice_api: APIClient, agent: Agent, secret_tool: Tool
) -> None:
    AgentToolFactory(agent=agent, tool=secret_tool)
    url = f"/v1/agents/{agent.public_id}/tools/approval/get_secret_code_tool"

    off = alice_api.patch(f"{url}?requires_approval=false")

    assert off.status_code == 200
    assert off.json()["tool_rules"] == []
    assert AgentTool.objects.get(agent=agent, tool=secret_tool).requires_approval is False

    on = alice_api.patch(f"{url}?requires_approval=true")

    assert [r["type"] for r in on.json()["tool_rules"]] == ["requires_approval"]
    assert AgentTool.objects.get(agent=agent, tool=secret_tool).requires_approval is True


@pytest.mark.parametrize("flag", [False, True])
def test_it_reads_requires_approval_from_the_body_as_1x_sends_it(
    alice_api: APIClient, agent: Agent, secret_tool: Tool, flag: bool
) -> None:
    AgentToolFactory(agent=agent, tool=secret_tool)
    url = f"/v1/agents/{agent.public_id}/tools/approval/get_secret_code_tool"

    response = alice_api.patch(url, {"requires_approval": flag}, format="json")

    assert response.status_code == 200
    assert AgentTool.objects.get(agent=agent, tool=secret_tool).requires_approval is flag


def test_a_requires_approval_body_that_is_not_a_boolean_is_a_422(
    alice_api: APIClient, agent: Agent, secret_tool: Tool
) -> None:
    AgentToolFactory(agent=agent, tool=secret_tool)
    url = f"/v1/agents/{agent.public_id}/tools/approval/get_secret_code_tool"

    response = alice_api.patch(url, {"requires_approval": "maybe"}, format="json")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "requires_approval"]


def test_it_requires_the_requires_approval_query_parameter(
    alice_api: APIClient, agent: Agent, secret_tool: Tool
) -> None:
    AgentToolFactory(agent=agent, tool=secret_tool)

    response = alice_api.patch(f"/v1/agents/{agent.public_id}/tools/approval/get_secret_code_tool")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "requires_approval"]


def test_it_answers_404_for_approval_of_a_tool_that_is_not_attached(alice_api: APIClient, agent: Agent) -> None:
    response = alice_api.patch(f"/v1/agents/{agent.public_id}/tools/approval/ghost?requires_approval=true")

    assert response.status_code == 404


def test_it_answers_401_without_a_key_or_with_a_bad_one(agent: Agent) -> None:
    anonymous = APIClient()
    assert anonymous.get("/v1/agents/").status_code == 401
    anonymous.credentials(HTTP_AUTHORIZATION="Bearer sk-agent-wrong")
    response = anonymous.get(f"/v1/agents/{agent.public_id}")
    assert response.status_code == 401
    assert "detail" in response.json()


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/v1/agents/{agent}"),
        ("patch", "/v1/agents/{agent}"),
        ("delete", "/v1/agents/{agent}"),
        ("get", "/v1/agents/{agent}/tools"),
        ("patch", "/v1/agents/{agent}/tools/attach/{tool}"),
        ("patch", "/v1/agents/{agent}/tools/detach/{tool}"),
        ("patch", "/v1/agents/{agent}/tools/approval/{tool_name}?requires_approval=false"),
    ],
)
def test_it_rejects_other_org(charlie_api: APIClient, cast: Cast, method: str, path: str) -> None:
    attachment = AgentToolFactory(agent=AgentFactory(organization=cast.org_a))
    url = path.format(agent=attachment.agent.public_id, tool=attachment.tool.public_id, tool_name=attachment.tool.name)

    response = getattr(charlie_api, method)(url, {}, format="json")

    assert response.status_code == 404
    assert Agent.objects.filter(pk=attachment.agent.pk).exists()
    assert AgentTool.objects.filter(pk=attachment.pk).exists()


def test_it_rejects_other_org_tools_on_own_agents(alice_api: APIClient, agent: Agent, cast: Cast) -> None:
    foreign = ToolFactory(organization=cast.org_b)

    response = alice_api.patch(f"/v1/agents/{agent.public_id}/tools/attach/{foreign.public_id}")

    assert response.status_code == 404
    assert not AgentTool.objects.exists()


def test_it_lists_agents_in_a_constant_number_of_queries(
    alice_api: APIClient, cast: Cast, django_assert_max_num_queries: Any
) -> None:
    for i in range(6):
        agent = services.agent_create(organization=cast.org_a, name=f"a{i}")
        AgentToolFactory.create_batch(2, agent=agent)

    with django_assert_max_num_queries(9):  # one of them: the providers the agents' handles name
        response = alice_api.get("/v1/agents/")

    assert len(response.json()) == 6
    assert all(len(state["tools"]) == 2 for state in response.json())


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"context_window_limit": 2**74}, ["body", "context_window_limit"]),
        ({"llm_config": {"max_tokens": 2**31}}, ["body", "llm_config", "max_tokens"]),
    ],
)
def test_it_answers_422_for_a_number_too_large_to_store_at_create(
    alice_api: APIClient, cast: Cast, body: dict[str, Any], loc: list[str]
) -> None:
    # These overflowed the integer columns: a 500 on SQLite and on Postgres.
    response = alice_api.post("/v1/agents/", body, format="json")

    assert (response.status_code, response.json()["detail"][0]["loc"]) == (422, loc)
    assert not Agent.objects.exists()


def test_it_answers_422_for_a_number_too_large_to_store_at_modify(alice_api: APIClient, agent: Agent) -> None:
    response = alice_api.patch(
        f"/v1/agents/{agent.public_id}", {"llm_config": {"context_window": 2**40}}, format="json"
    )

    assert (response.status_code, response.json()["detail"][0]["loc"]) == (
        422,
        ["body", "llm_config", "context_window"],
    )
    agent.refresh_from_db()
    assert agent.context_window == 32_000
