"""``manage.py seed_demo``: the demo organization, its login, agent, tools and API key."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory, override_settings
from rest_framework.test import APIClient

from accounts.models import ApiKey, Membership, Organization, Role, User
from agents.models import Agent
from onboarding.demo import DEMO_EMAIL, DEMO_PASSWORD, ROLL_DICE_SOURCE
from tests.support.commands import authenticates, run
from tools.models import AgentTool, Tool, ToolKind
from tools.services import tool_upsert_from_source

pytestmark = pytest.mark.django_db


def test_seed_demo_creates_the_demo_organization_user_agent_and_tools():
    lines = run("seed_demo")

    organization = Organization.objects.get()
    assert (organization.name, organization.slug) == ("Demo", "demo")
    user = User.objects.get()
    assert user.email == DEMO_EMAIL
    assert user.check_password(DEMO_PASSWORD)
    assert Membership.objects.get().role == Role.OWNER
    agent = Agent.objects.get()
    assert (agent.name, agent.model, agent.organization) == ("Demo agent", "demo/echo-1", organization)
    attached = {link.tool.name: link.effective_requires_approval for link in AgentTool.objects.filter(agent=agent)}
    assert attached == {"roll_dice": False, "get_secret_code": True}
    assert any(DEMO_PASSWORD in line for line in lines)


def test_seed_demo_is_idempotent():
    first = run("seed_demo")
    second = run("seed_demo")

    assert Organization.objects.count() == 1
    assert User.objects.count() == 1
    assert Membership.objects.count() == 1
    assert Agent.objects.count() == 1
    assert Tool.objects.count() == 2
    assert AgentTool.objects.count() == 2
    assert ApiKey.objects.count() == 1
    assert first[-1] == second[-1]


def test_seed_demo_prints_a_working_api_key_on_its_last_line():
    raw_key = run("seed_demo")[-1]

    assert raw_key.startswith("sk-agent-")
    assert authenticates(raw_key)
    assert ApiKey.objects.get().organization.slug == "demo"


def test_seed_demo_restores_a_changed_password_and_a_revoked_key():
    raw_key = run("seed_demo")[-1]
    user = User.objects.get()
    user.set_password("something-else")
    user.save()
    ApiKey.objects.get().revoke()

    run("seed_demo")

    assert User.objects.get().check_password(DEMO_PASSWORD)
    assert authenticates(raw_key)


def test_seed_demo_replaces_a_demo_key_derived_from_an_earlier_secret_key():
    with override_settings(SECRET_KEY="an-earlier-secret-key-" + "x" * 40):
        old_key = run("seed_demo")[-1]

    new_key = run("seed_demo")[-1]

    assert new_key != old_key
    assert authenticates(new_key)
    assert not authenticates(old_key)
    assert ApiKey.objects.active().count() == 1


@override_settings(DEBUG=True)
def test_seed_demo_lets_the_demo_user_into_the_admin_in_the_embedded_run():
    run("seed_demo")
    client = Client()

    # The login lockout (django-axes) needs the request a real login has.
    assert client.login(request=RequestFactory().post("/accounts/login/"), username=DEMO_EMAIL, password=DEMO_PASSWORD)
    assert client.get("/admin/agents/agent/").status_code == 200


def test_seed_demo_does_not_make_an_admin_with_debug_off():
    lines = run("seed_demo")

    user = User.objects.get()
    assert not (user.is_staff or user.is_superuser)
    assert any("not an admin" in line for line in lines)


@pytest.fixture
def no_sandbox(settings):
    """A host without bubblewrap: source tools are refused there."""
    settings.TOOL_SANDBOX_BACKEND = "disabled"
    return settings


def test_the_demo_agents_tools_work_on_a_host_without_a_sandbox(no_sandbox):
    raw_key = run("seed_demo")[-1]
    agent = Agent.objects.get()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")

    answer = api.post(
        f"/v1/agents/{agent.public_id}/messages",
        {"messages": [{"role": "user", "content": "call roll_dice with num_sides=6"}]},
        format="json",
    ).json()

    returned = next(m for m in answer["messages"] if m["message_type"] == "tool_return_message")
    assert returned["status"] == "success"
    assert 1 <= int(returned["tool_return"]) <= 6


def test_seed_demo_turns_an_earlier_seeds_source_tools_into_the_built_ins():
    organization = Organization.objects.create(name="Demo", slug="demo")
    earlier = tool_upsert_from_source(organization=organization, source_code=ROLL_DICE_SOURCE)

    run("seed_demo")

    tool = Tool.objects.get(name="roll_dice")
    assert (tool.pk, tool.kind, tool.source_code) == (earlier.pk, ToolKind.BUILTIN, "")
    assert Tool.objects.get(name="get_secret_code").kind == ToolKind.BUILTIN
