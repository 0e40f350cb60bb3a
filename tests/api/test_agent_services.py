"""``agents.services``: creating and changing agents, their tools and their approval policy."""

from __future__ import annotations

import json

import pytest

from agents import services
from agents.errors import InvalidArgument, NotFound
from agents.models import Agent, Message
from tests.conftest import Cast
from tests.factories import AgentFactory, AgentToolFactory, ToolFactory
from tools.models import AgentTool, Tool

pytestmark = pytest.mark.django_db


def test_it_creates_an_agent_with_the_system_and_login_rows_in_context(cast: Cast) -> None:
    agent = services.agent_create(organization=cast.org_a, created_by=cast.alice, name="a", system="Be brief.")

    rows = list(Message.objects.in_context(agent))
    assert [(r.seq, r.role) for r in rows] == [(0, "system"), (1, "user")]
    assert rows[0].content == [{"type": "text", "text": "Be brief."}]
    login = json.loads(rows[1].content[0]["text"])
    assert login["type"] == "login"
    assert login["last_login"] == "Never (first login)"
    assert login["time"].endswith(" UTC+0000")
    assert rows[1].content[0]["text"].startswith('{\n  "type": "login"')
    assert agent.created_by == cast.alice
    assert agent.organization == cast.org_a


def test_it_defaults_the_model_embedding_and_name(cast: Cast) -> None:
    agent = services.agent_create(organization=cast.org_a)

    assert agent.model == "demo/echo-1"
    assert agent.embedding == "openai/text-embedding-3-small"
    assert agent.name.startswith("agent-")


def test_it_turns_on_extended_thinking_for_anthropic_thinking_models(cast: Cast) -> None:
    agent = services.agent_create(organization=cast.org_a, model="anthropic/claude-sonnet-4-5-20250929")

    agent.refresh_from_db()
    assert (agent.enable_reasoner, agent.max_reasoning_tokens) == (True, 1024)
    assert (agent.temperature, agent.max_tokens, agent.context_window) == (
        0.7,
        8192,
        128_000,
    )  # min(model window, 128000), as Letta
    assert agent.parallel_tool_calls is False


@pytest.mark.parametrize("handle", ["claude-sonnet", "mistral/large", "openai/", ""])
def test_it_rejects_a_model_handle_without_a_known_provider(cast: Cast, handle: str) -> None:
    with pytest.raises(InvalidArgument, match="Model handle"):
        services.agent_create(organization=cast.org_a, model=handle or "nothing")

    assert not Agent.objects.exists()


def test_it_rejects_an_unknown_embedding_like_letta(cast: Cast) -> None:
    with pytest.raises(InvalidArgument, match="INVALID_ARGUMENT: Embedding model gpt-4 is not supported by openai"):
        services.agent_create(organization=cast.org_a, embedding="openai/gpt-4")


def test_it_accepts_letta_and_openai_embedding_handles(cast: Cast) -> None:
    for handle in ("letta/letta-free", "openai/text-embedding-3-large"):
        assert services.agent_create(organization=cast.org_a, embedding=handle).embedding == handle


def test_it_attaches_tools_by_id_and_by_name(cast: Cast) -> None:
    by_id = ToolFactory(organization=cast.org_a)
    by_name = ToolFactory(organization=cast.org_a)

    agent = services.agent_create(organization=cast.org_a, tool_ids=[by_id.public_id], tool_names=[by_name.name])

    assert set(agent.tools.all()) == {by_id, by_name}


def test_it_refuses_a_tool_of_another_organization_and_names_it(cast: Cast) -> None:
    foreign = ToolFactory(organization=cast.org_b)

    with pytest.raises(InvalidArgument, match=foreign.public_id) as error:
        services.agent_create(organization=cast.org_a, tool_ids=[foreign.public_id])

    assert error.value.field == "tool_ids"
    assert not Agent.objects.exists()


def test_it_turns_requires_approval_rules_into_agent_tool_overrides(cast: Cast) -> None:
    tool = ToolFactory(organization=cast.org_a)
    rules = [
        {"tool_name": tool.name, "type": "requires_approval"},
        {"tool_name": tool.name, "type": "exit_loop", "prompt_template": None},
    ]

    agent = services.agent_create(organization=cast.org_a, tool_ids=[tool.public_id], tool_rules=rules)

    assert AgentTool.objects.get(agent=agent, tool=tool).requires_approval is True
    assert agent.tool_rules == [{"tool_name": tool.name, "type": "exit_loop", "prompt_template": None}]


def test_it_refuses_an_approval_rule_for_a_tool_that_is_not_attached(cast: Cast) -> None:
    with pytest.raises(InvalidArgument, match="not attached: ghost"):
        services.agent_create(organization=cast.org_a, tool_rules=[{"tool_name": "ghost", "type": "requires_approval"}])


def test_it_updates_llm_settings_from_an_llm_config(cast: Cast) -> None:
    agent = services.agent_create(organization=cast.org_a, model="anthropic/claude-sonnet-4-5-20250929")
    config = {
        "model": "claude-sonnet-4-5-20250929",
        "model_endpoint_type": "anthropic",
        "handle": "anthropic/claude-sonnet-4-5-20250929",
        "temperature": 0.2,
        "max_tokens": 1000,
        "context_window": 16000,
        "enable_reasoner": True,
        "max_reasoning_tokens": 2048,
        "parallel_tool_calls": True,
        "reasoning_effort": None,
    }

    services.agent_update(agent=agent, llm_config=config)

    agent.refresh_from_db()
    assert (agent.temperature, agent.max_tokens, agent.context_window) == (0.2, 1000, 16000)
    assert (agent.enable_reasoner, agent.max_reasoning_tokens, agent.parallel_tool_calls) == (True, 2048, True)
    assert agent.reasoning_effort == ""


def test_it_switches_the_model_with_that_models_reasoning_defaults(cast: Cast) -> None:
    agent = services.agent_create(organization=cast.org_a, model="anthropic/claude-sonnet-4-5-20250929")

    services.agent_update(agent=agent, model="openai/gpt-4.1-mini")

    agent.refresh_from_db()
    assert (agent.model, agent.enable_reasoner, agent.max_reasoning_tokens) == ("openai/gpt-4.1-mini", False, 0)


def test_it_rewrites_the_in_context_system_row_when_the_system_prompt_changes(cast: Cast) -> None:
    agent = services.agent_create(organization=cast.org_a, system="old")

    services.agent_update(agent=agent, system="new")

    agent.refresh_from_db()
    assert agent.system == "new"
    assert Message.objects.get(agent=agent, seq=0).content == [{"type": "text", "text": "new"}]


def test_it_replaces_the_attached_tools(cast: Cast) -> None:
    kept, dropped, added = (ToolFactory(organization=cast.org_a) for _ in range(3))
    agent = services.agent_create(organization=cast.org_a, tool_ids=[kept.public_id, dropped.public_id])

    services.agent_update(agent=agent, tool_ids=[kept.public_id, added.public_id])

    assert set(agent.tools.all()) == {kept, added}


def test_it_makes_the_rules_list_the_truth_for_approval_on_update(cast: Cast) -> None:
    default_gated = ToolFactory(organization=cast.org_a, default_requires_approval=True)
    free = ToolFactory(organization=cast.org_a)
    agent = services.agent_create(organization=cast.org_a, tool_ids=[default_gated.public_id, free.public_id])

    services.agent_update(agent=agent, tool_rules=[{"tool_name": free.name, "type": "requires_approval"}])

    policies = dict(AgentTool.objects.filter(agent=agent).values_list("tool__name", "approval_policy"))
    assert policies == {default_gated.name: "allow", free.name: "ask"}


def test_it_sets_and_clears_the_approval_override_of_an_attached_tool(cast: Cast) -> None:
    attachment = AgentToolFactory(agent=AgentFactory(organization=cast.org_a), tool__default_requires_approval=True)

    services.agent_set_tool_approval(agent=attachment.agent, tool_name=attachment.tool.name, requires_approval=False)

    attachment.refresh_from_db()
    assert attachment.requires_approval is False
    assert attachment.effective_requires_approval is False


def test_it_refuses_an_approval_override_for_a_tool_that_is_not_attached(cast: Cast) -> None:
    with pytest.raises(NotFound):
        services.agent_set_tool_approval(
            agent=AgentFactory(organization=cast.org_a), tool_name="ghost", requires_approval=True
        )


def test_it_attaches_and_detaches_a_tool_idempotently(cast: Cast) -> None:
    agent = AgentFactory(organization=cast.org_a)
    tool = ToolFactory(organization=cast.org_a)

    services.agent_attach_tool(agent=agent, tool=tool)
    services.agent_attach_tool(agent=agent, tool=tool)
    assert AgentTool.objects.filter(agent=agent, tool=tool).count() == 1

    services.agent_detach_tool(agent=agent, tool=tool)
    services.agent_detach_tool(agent=agent, tool=tool)
    assert not AgentTool.objects.filter(agent=agent).exists()


def test_it_never_attaches_a_tool_of_another_organization(cast: Cast) -> None:
    agent = AgentFactory(organization=cast.org_a)

    with pytest.raises(NotFound):
        services.agent_attach_tool(agent=agent, tool=ToolFactory(organization=cast.org_b))

    assert not AgentTool.objects.exists()


def test_it_deletes_an_agent_with_its_messages_and_attachments(cast: Cast) -> None:
    tool = ToolFactory(organization=cast.org_a)
    agent = services.agent_create(organization=cast.org_a, tool_ids=[tool.public_id])

    services.agent_delete(agent=agent)

    assert not Agent.objects.exists()
    assert not Message.objects.exists()
    assert not AgentTool.objects.exists()
    assert Tool.objects.filter(pk=tool.pk).exists()
