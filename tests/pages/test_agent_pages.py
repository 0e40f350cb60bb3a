from __future__ import annotations

import pytest
from django.urls import reverse

from agents import services
from agents.models import Agent, Message
from tests.factories import AgentFactory, AgentToolFactory, MessageFactory, ToolFactory
from tools.models import AgentTool

pytestmark = pytest.mark.django_db


def test_it_searches_agents_by_name(client, cast):
    AgentFactory(organization=cast.org_a, name="Research helper")
    AgentFactory(organization=cast.org_a, name="Support bot")
    client.force_login(cast.alice)

    content = client.get(reverse("agents:list"), {"q": "support"}).content.decode()

    assert "Support bot" in content
    assert "Research helper" not in content


def test_agents_without_an_id_redirects_to_the_list_keeping_the_search(client, cast):
    client.force_login(cast.alice)

    response = client.get("/agents/", {"q": "support"})

    assert response.status_code == 302
    assert response["Location"] == reverse("agents:list") + "?q=support"


def test_it_sends_anonymous_visitors_to_the_login_page(client, cast):
    response = client.get(reverse("agents:list"))

    assert response.status_code == 302
    assert reverse("accounts:login") in response["Location"]


def test_the_create_form_offers_the_demo_model_labelled_as_a_demo(client, cast):
    client.force_login(cast.alice)

    content = client.get(reverse("agents:create")).content.decode()

    assert 'value="demo/echo-1"' in content
    assert "Demo model (offline, no API key)" in content


def test_it_creates_an_agent_with_tools_and_their_approval_policies(client, cast):
    free = ToolFactory(organization=cast.org_a, name="roll_dice")
    gated = ToolFactory(organization=cast.org_a, name="get_secret_code", default_requires_approval=True)
    unused = ToolFactory(organization=cast.org_a, name="unused_tool")
    client.force_login(cast.alice)

    response = client.post(
        reverse("agents:create"),
        {
            "name": "Helper",
            "model": "demo/echo-1",
            "system": "Be brief.",
            "tools": [str(free.pk), str(gated.pk)],
            f"approval_{free.pk.hex}": "ask",
            f"approval_{gated.pk.hex}": "inherit",
            f"approval_{unused.pk.hex}": "allow",
        },
    )

    agent = Agent.objects.get(organization=cast.org_a, name="Helper")
    assert response.status_code == 302
    assert response["Location"] == reverse("agents:chat", kwargs={"agent_id": agent.public_id})
    assert agent.model == "demo/echo-1"
    assert agent.system == "Be brief."
    assert agent.created_by == cast.alice
    policies = {at.tool.name: at.requires_approval for at in AgentTool.objects.filter(agent=agent)}
    assert policies == {"roll_dice": True, "get_secret_code": None}
    assert Message.objects.filter(agent=agent).count() == 2  # the system prompt and the login row


def test_it_edits_an_agent_and_can_return_a_tool_to_its_default_policy(client, cast):
    agent = AgentFactory(organization=cast.org_a, name="Helper")
    gated = ToolFactory(organization=cast.org_a, name="get_secret_code", default_requires_approval=True)
    AgentToolFactory(agent=agent, tool=gated, requires_approval=False)
    client.force_login(cast.bob)

    form_page = client.get(reverse("agents:edit", kwargs={"agent_id": agent.public_id})).content.decode()
    response = client.post(
        reverse("agents:edit", kwargs={"agent_id": agent.public_id}),
        {
            "name": "Renamed",
            "model": "demo/echo-1",
            "system": "New prompt",
            "tools": [str(gated.pk)],
            f"approval_{gated.pk.hex}": "inherit",
        },
    )

    agent.refresh_from_db()
    assert '<option value="allow" selected>' in form_page
    assert response.status_code == 302
    assert agent.name == "Renamed"
    assert agent.system == "New prompt"
    assert AgentTool.objects.get(agent=agent, tool=gated).requires_approval is None


def test_it_detaches_tools_left_unchecked(client, cast):
    agent = AgentFactory(organization=cast.org_a)
    tool = ToolFactory(organization=cast.org_a)
    AgentToolFactory(agent=agent, tool=tool)
    client.force_login(cast.alice)

    client.post(
        reverse("agents:edit", kwargs={"agent_id": agent.public_id}),
        {"name": agent.name, "model": agent.model, "system": "", f"approval_{tool.pk.hex}": "inherit"},
    )

    assert not AgentTool.objects.filter(agent=agent).exists()


def test_it_refuses_a_tool_of_another_organization(client, cast):
    foreign = ToolFactory(organization=cast.org_b)
    client.force_login(cast.alice)

    response = client.post(
        reverse("agents:create"), {"name": "Helper", "model": "demo/echo-1", "system": "", "tools": [str(foreign.pk)]}
    )

    assert response.status_code == 200
    assert "tools" in response.context["form"].errors
    assert not Agent.objects.filter(name="Helper").exists()


def test_it_deletes_an_agent_after_confirmation(client, cast):
    agent = AgentFactory(organization=cast.org_a)
    client.force_login(cast.alice)

    confirm = client.get(reverse("agents:delete", kwargs={"agent_id": agent.public_id}))
    response = client.post(reverse("agents:delete", kwargs={"agent_id": agent.public_id}))

    assert confirm.status_code == 200
    assert response.status_code == 302
    assert not Agent.objects.filter(pk=agent.pk).exists()


@pytest.mark.parametrize("name", ["agents:chat", "agents:edit", "agents:delete", "agents:chat_history"])
def test_it_rejects_other_org(client, cast, name):
    foreign = AgentFactory(organization=cast.org_b)
    client.force_login(cast.alice)

    get = client.get(reverse(name, kwargs={"agent_id": foreign.public_id}))
    post = client.post(reverse(name, kwargs={"agent_id": foreign.public_id}))

    assert get.status_code == 404
    assert post.status_code in (404, 405)
    assert Agent.objects.filter(pk=foreign.pk).exists()


def test_the_chat_page_passes_its_config_and_demo_suggestions(client, cast):
    agent = services.agent_create(organization=cast.org_a, name="Demo", model="demo/echo-1")
    tool = ToolFactory(
        organization=cast.org_a,
        name="roll_dice",
        json_schema={
            "name": "roll_dice",
            "description": "Roll a die.",
            "parameters": {
                "type": "object",
                "properties": {"num_sides": {"type": "integer"}},
                "required": ["num_sides"],
            },
        },
    )
    AgentToolFactory(agent=agent, tool=tool)
    client.force_login(cast.alice)

    response = client.get(reverse("agents:chat", kwargs={"agent_id": agent.public_id}))

    config = response.context["config"]
    content = response.content.decode()
    assert config["socketPath"] == f"/ws/agents/{agent.public_id}/"
    assert config["historyUrl"] == reverse("agents:chat_history", kwargs={"agent_id": agent.public_id})
    assert "call roll_dice with num_sides=6" in config["suggestions"]
    assert 'id="chat-config"' in content
    assert "demo model" in content


def test_the_history_endpoint_pages_rows_upward_with_their_seq_and_wire_messages(client, cast):
    agent = services.agent_create(organization=cast.org_a, name="Demo", model="demo/echo-1")
    for seq in range(2, 42):
        MessageFactory(agent=agent, seq=seq, content=[{"type": "text", "text": f"message {seq}"}])
    client.force_login(cast.alice)
    url = reverse("agents:chat_history", kwargs={"agent_id": agent.public_id})

    first = client.get(url).json()
    second = client.get(url, {"before": first["rows"][0]["row"]["id"]}).json()

    assert [r["row"]["seq"] for r in first["rows"]] == list(range(12, 42))
    assert first["has_more"] is True
    assert first["run"] is None
    assert first["rows"][-1]["messages"][0]["message_type"] == "user_message"
    assert first["rows"][-1]["messages"][0]["content"] == "message 41"
    assert [r["row"]["seq"] for r in second["rows"]] == list(range(1, 12))  # the system row is not shown
    assert second["has_more"] is False


def test_the_history_endpoint_is_a_404_for_a_cursor_of_another_agent(client, cast):
    agent = AgentFactory(organization=cast.org_a)
    other = MessageFactory(agent=AgentFactory(organization=cast.org_a))
    client.force_login(cast.alice)

    response = client.get(
        reverse("agents:chat_history", kwargs={"agent_id": agent.public_id}), {"before": other.public_id}
    )

    assert response.status_code == 404


def _dice_agent(cast):
    from tests.tool_sources import DICE_SOURCE
    from tools.services import tool_upsert_from_source

    dice = tool_upsert_from_source(organization=cast.org_a, source_code=DICE_SOURCE)
    agent = services.agent_create(organization=cast.org_a, name="Dice", model="demo/echo-1", tool_ids=[dice.public_id])
    return agent, dice


def _ask_when(client, agent, dice, condition: str):
    """Submit the settings form with the dice tool asking when ``condition`` holds."""
    return client.post(
        reverse("agents:edit", kwargs={"agent_id": agent.public_id}),
        {
            "name": agent.name,
            "model": agent.model,
            "system": "",
            "tools": [str(dice.pk)],
            f"approval_{dice.pk.hex}": "ask_when",
            f"condition_{dice.pk.hex}": condition,
        },
    )


def test_the_settings_page_sets_an_ask_when_policy_and_shows_it_back(client, cast):
    agent, dice = _dice_agent(cast)
    client.force_login(cast.alice)
    url = reverse("agents:edit", kwargs={"agent_id": agent.public_id})

    response = _ask_when(client, agent, dice, "num_sides > 20")

    assert response.status_code == 302
    link = AgentTool.objects.get(agent=agent, tool=dice)
    assert (link.approval_policy, link.approval_condition) == ("ask_when", "num_sides > 20")
    page = client.get(url).content.decode()
    assert '<option value="ask_when" selected>' in page
    assert 'value="num_sides &gt; 20"' in page


def test_the_settings_page_shows_an_invalid_condition_as_a_form_error(client, cast):
    agent, dice = _dice_agent(cast)
    client.force_login(cast.alice)

    response = _ask_when(client, agent, dice, "sides >")

    assert response.status_code == 200
    assert "Invalid approval condition: expected an argument name or a value" in response.content.decode()
    assert AgentTool.objects.get(agent=agent, tool=dice).approval_policy == "inherit"


def test_the_settings_page_shows_and_reverses_an_always_allow(client, cast):
    agent, dice = _dice_agent(cast)
    services.agent_set_tool_approval(agent=agent, tool_name=dice.name, requires_approval=False)
    client.force_login(cast.alice)
    url = reverse("agents:edit", kwargs={"agent_id": agent.public_id})
    assert '<option value="allow" selected>' in client.get(url).content.decode()

    client.post(
        url,
        {
            "name": agent.name,
            "model": agent.model,
            "system": "",
            "tools": [str(dice.pk)],
            f"approval_{dice.pk.hex}": "ask",
        },
    )

    assert AgentTool.objects.get(agent=agent, tool=dice).approval_policy == "ask"
