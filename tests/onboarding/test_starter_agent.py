"""A new organization can try an agent at once: the starter agent, and an Agents page that explains itself."""

from __future__ import annotations

import pytest
from django.urls import reverse

from accounts import services
from agents.models import Agent
from onboarding.starter import STARTER_AGENT_NAME, starter_kit_create
from tests.factories import AgentFactory, ToolFactory, UserFactory
from tools.models import AgentTool, Tool

pytestmark = pytest.mark.django_db


def test_a_new_organization_gets_the_starter_agent_on_the_demo_model_with_one_tool_behind_an_approval():
    owner = UserFactory()

    organization = services.organization_create_with_owner(name="Initech", owner=owner)

    agent = Agent.objects.for_org(organization).get()
    assert (agent.name, agent.model, agent.created_by) == (STARTER_AGENT_NAME, "demo/echo-1", owner)
    approval = {at.tool.name: at.effective_requires_approval for at in AgentTool.objects.filter(agent=agent)}
    assert approval == {"roll_dice": False, "get_secret_code": True}


def test_the_chat_of_the_starter_agent_suggests_prompts_that_call_its_tools(client):
    owner = UserFactory()
    organization = services.organization_create_with_owner(name="Initech", owner=owner)
    client.force_login(owner)

    agent = Agent.objects.for_org(organization).get()
    content = client.get(reverse("agents:chat", kwargs={"agent_id": agent.public_id})).content.decode()

    assert "call get_secret_code with" in content and "call roll_dice with" in content


def test_an_empty_agents_page_explains_agents_and_offers_to_create_one_or_try_the_starter(client, cast):
    client.force_login(cast.alice)

    content = client.get(reverse("agents:list")).content.decode()

    assert "An agent is a model with a system prompt" in content
    assert "Create agent" in content and "Try the starter agent" in content
    assert 'type="search"' not in content  # nothing to search yet


def test_trying_the_starter_agent_makes_it_again_keeping_the_organizations_own_tools(client, cast):
    own = ToolFactory(organization=cast.org_a, name="roll_dice")
    client.force_login(cast.alice)

    response = client.post(reverse("onboarding:starter_agent"))

    agent = Agent.objects.for_org(cast.org_a).get(name=STARTER_AGENT_NAME)
    assert response.status_code == 302
    assert response.url == reverse("agents:chat", kwargs={"agent_id": agent.public_id})
    assert Tool.objects.for_org(cast.org_a).filter(name="roll_dice").get() == own
    assert client.post(reverse("onboarding:starter_agent")).url == response.url  # the same agent, not a second one
    assert Agent.objects.for_org(cast.org_b).count() == 0


def test_the_starter_kit_leaves_an_existing_starter_agent_alone(cast):
    existing = AgentFactory(organization=cast.org_a, name=STARTER_AGENT_NAME)

    assert starter_kit_create(organization=cast.org_a) == existing
