from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.db.models import TextField
from django.db.models.functions import Cast as SqlCast
from django.urls import reverse

from accounts.models import ApiKey, Membership, Role, User
from agents.models import Agent
from providers.models import Provider
from tests.factories import (
    AgentFactory,
    AgentToolFactory,
    MembershipFactory,
    MessageFactory,
    RunFactory,
    ToolFactory,
    UserFactory,
    api_key_for,
)
from tools.models import AgentTool

pytestmark = pytest.mark.django_db

# The provider page's read-only inline of discovered models (the management form it posts).
NO_INLINE_MODELS = {"models-TOTAL_FORMS": "0", "models-INITIAL_FORMS": "0"}


@pytest.fixture
def staff(cast):
    """dave: staff (not superuser) with every admin permission, member of org A only."""
    dave = UserFactory(email="dave@example.com", is_staff=True)
    dave.user_permissions.set(
        Permission.objects.filter(content_type__app_label__in=["accounts", "agents", "tools", "providers"])
    )
    MembershipFactory(user=dave, organization=cast.org_a, role=Role.ADMIN)
    return dave


@pytest.fixture
def rows(cast):
    """One agent (with a tool, a run, a message) and one API key in each organization."""
    made = {}
    for label, organization in (("acme", cast.org_a), ("globex", cast.org_b)):
        agent = AgentFactory(organization=organization, name=f"{label}-agent")
        tool = ToolFactory(organization=organization, name=f"{label}_tool")
        AgentToolFactory(agent=agent, tool=tool)
        run = RunFactory(agent=agent)
        MessageFactory(agent=agent, content=[{"type": "text", "text": f"{label} says hi"}])
        key, _ = api_key_for(organization, name=f"{label}-key")
        made[label] = {"agent": agent, "tool": tool, "run": run, "key": key}
    return made


def changelist(model: str) -> str:
    return reverse(f"admin:{model.replace('.', '_')}_changelist")


def change(model: str, pk) -> str:
    return reverse(f"admin:{model.replace('.', '_')}_change", args=[pk])


@pytest.mark.parametrize(
    ("model", "own", "other"),
    [
        ("agents.agent", "acme-agent", "globex-agent"),
        ("tools.tool", "acme_tool", "globex_tool"),
        ("accounts.apikey", "acme-key", "globex-key"),
        ("agents.message", "acme says hi", "globex says hi"),
        ("accounts.organization", "Acme", "Globex"),
    ],
)
def test_it_lists_only_rows_of_the_staff_members_organizations(client, staff, rows, model, own, other):
    client.force_login(staff)

    content = client.get(changelist(model)).content.decode()

    assert own in content
    assert other not in content


def test_it_lists_only_runs_of_the_staff_members_organizations(client, staff, rows):
    client.force_login(staff)

    content = client.get(changelist("agents.run")).content.decode()

    assert rows["acme"]["run"].public_id in content
    assert rows["globex"]["run"].public_id not in content


@pytest.mark.parametrize("kind", ["agent", "tool", "run", "key"])
def test_it_rejects_other_org(client, staff, rows, kind):
    model = {"agent": "agents.agent", "tool": "tools.tool", "run": "agents.run", "key": "accounts.apikey"}[kind]
    client.force_login(staff)

    own = client.get(change(model, rows["acme"][kind].pk))
    other = client.get(change(model, rows["globex"][kind].pk))

    assert own.status_code == 200
    assert other.status_code == 404


def test_it_does_not_name_other_organizations_in_filters(client, staff, rows):
    client.force_login(staff)

    content = client.get(changelist("agents.run")).content.decode()

    assert "Globex" not in content


def test_it_offers_only_own_organizations_when_adding_an_agent(client, staff, cast):
    client.force_login(staff)

    content = client.get(reverse("admin:agents_agent_add")).content.decode()

    assert cast.org_a.name in content
    assert cast.org_b.name not in content


def test_it_refuses_to_save_an_agent_into_another_organization(client, staff, cast):
    client.force_login(staff)

    response = client.post(
        reverse("admin:agents_agent_add"),
        {
            "organization": cast.org_b.pk,
            "name": "sneaky",
            "model": "demo/echo-1",
            "temperature": 0.7,
            "context_window": 32000,
            "max_steps": 50,
            "max_reasoning_tokens": 0,
            "tags": "[]",
            "tool_rules": "[]",
            "tool_env_vars": "{}",
            "metadata": "{}",
            "agent_tools-TOTAL_FORMS": 0,
            "agent_tools-INITIAL_FORMS": 0,
        },
    )

    assert response.status_code == 200
    assert not Agent.objects.filter(name="sneaky").exists()


def test_it_offers_only_the_agents_own_tools_in_the_inline(client, staff, rows):
    client.force_login(staff)
    other_tool_in_scope = ToolFactory(organization=rows["acme"]["agent"].organization, name="second_acme_tool")

    content = client.get(change("agents.agent", rows["acme"]["agent"].pk)).content.decode()

    assert other_tool_in_scope.name in content
    assert "globex_tool" not in content


def test_it_links_an_agent_to_its_messages(client, staff, rows):
    client.force_login(staff)
    agent = rows["acme"]["agent"]
    MessageFactory(agent=AgentFactory(organization=agent.organization), content=[{"type": "text", "text": "elsewhere"}])

    page = client.get(change("agents.agent", agent.pk)).content.decode()
    link = changelist("agents.message") + f"?agent__id__exact={agent.pk}"
    assert link in page
    messages = client.get(link)

    assert messages.status_code == 200
    assert "acme says hi" in messages.content.decode()
    assert "elsewhere" not in messages.content.decode()


def test_it_finds_a_run_by_its_public_id(client, staff, rows):
    client.force_login(staff)
    other_run = RunFactory(agent=rows["acme"]["agent"])

    content = client.get(changelist("agents.run"), {"q": rows["acme"]["run"].public_id}).content.decode()

    assert rows["acme"]["run"].public_id in content
    assert other_run.public_id not in content


def test_it_never_shows_an_api_key_hash(client, staff, rows):
    client.force_login(staff)
    key = rows["acme"]["key"]

    content = client.get(change("accounts.apikey", key.pk)).content.decode()

    assert key.prefix in content
    assert key.key_hash not in content


def test_it_revokes_keys_with_the_admin_action(client, staff, rows):
    client.force_login(staff)
    key = rows["acme"]["key"]

    client.post(
        changelist("accounts.apikey"),
        {"action": "revoke", "_selected_action": [key.pk, rows["globex"]["key"].pk]},
    )

    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None
    assert ApiKey.objects.get(pk=rows["globex"]["key"].pk).revoked_at is None


def test_it_stores_a_provider_key_encrypted_and_never_shows_it(client, staff, cast):
    client.force_login(staff)

    client.post(
        reverse("admin:providers_provider_add"),
        {
            "organization": cast.org_a.pk,
            "name": "openai",
            "provider_type": "openai",
            "api_key": "sk-live-secret",
            "base_url": "",
            **NO_INLINE_MODELS,
        },
    )

    provider = Provider.objects.get()
    assert provider.api_key == "sk-live-secret"
    stored = Provider.objects.filter(pk=provider.pk).values_list(SqlCast("credentials", TextField()), flat=True).get()
    assert "sk-live-secret" not in stored
    page = client.get(change("providers.provider", provider.pk)).content.decode()
    assert "sk-live-secret" not in page
    assert stored not in page


def test_it_keeps_the_provider_key_when_the_field_is_left_empty(client, staff, cast):
    provider = Provider(
        organization=cast.org_a, name="anthropic", provider_type="anthropic", base_url="https://93.184.215.14/v1"
    )
    provider.api_key = "sk-ant-secret"
    provider.save()
    client.force_login(staff)

    client.post(
        change("providers.provider", provider.pk),
        {
            "name": "anthropic",
            "provider_type": "anthropic",
            "api_key": "",
            "base_url": provider.base_url,
            **NO_INLINE_MODELS,
        },
    )

    provider.refresh_from_db()
    assert (provider.api_key, provider.base_url) == ("sk-ant-secret", "https://93.184.215.14/v1")


def test_it_refuses_to_demote_the_last_owner_in_the_admin(admin_client, cast):
    owner = Membership.objects.get(user=cast.charlie)

    client_response = admin_client.post(
        change("accounts.membership", owner.pk),
        {"user": cast.charlie.pk, "organization": cast.org_b.pk, "role": Role.MEMBER},
    )

    assert client_response.status_code == 200
    assert Membership.objects.get(pk=owner.pk).role == Role.OWNER


def test_it_lets_superusers_see_every_organization(admin_client, rows):
    content = admin_client.get(changelist("agents.agent")).content.decode()

    assert "acme-agent" in content
    assert "globex-agent" in content


def test_it_shows_staff_the_people_of_their_organizations_read_only(client, staff, cast):
    client.force_login(staff)

    listing = client.get(changelist("accounts.user")).content.decode()
    page = client.get(change("accounts.user", cast.bob.pk))

    assert "bob@example.com" in listing
    assert "charlie@example.com" not in listing
    assert page.status_code == 200
    assert b'name="is_superuser"' not in page.content
    assert client.get(change("accounts.user", cast.charlie.pk)).status_code == 404


def test_it_keeps_agent_tools_within_one_organization(client, staff, rows):
    client.force_login(staff)
    agent = rows["acme"]["agent"]

    client.post(
        change("tools.tool", rows["acme"]["tool"].pk),
        {
            "organization": agent.organization.pk,
            "name": "acme_tool",
            "kind": "source",
            "tool_type": "custom",
            "source_type": "python",
            "return_char_limit": 50000,
            "json_schema": "{}",
            "tags": "[]",
            "metadata": "{}",
            "agent_tools-TOTAL_FORMS": 1,
            "agent_tools-INITIAL_FORMS": 0,
            "agent_tools-0-agent": rows["globex"]["agent"].pk,
        },
    )

    assert not AgentTool.objects.filter(agent=rows["globex"]["agent"], tool=rows["acme"]["tool"]).exists()


ADMIN_PAGES = [
    "/admin/",
    "/admin/accounts/organization/",
    "/admin/accounts/membership/",
    "/admin/accounts/invite/",
    "/admin/accounts/invite/add/",
    "/admin/accounts/apikey/",
    "/admin/providers/provider/",
    "/admin/providers/provider/add/",
    "/admin/accounts/user/",
    "/admin/accounts/user/?q=alice",
    "/admin/agents/agent/",
    "/admin/agents/agent/add/",
    "/admin/agents/message/",
    "/admin/agents/run/",
    "/admin/agents/run/?q=not-an-id",
    "/admin/agents/step/",
    "/admin/agents/block/",
    "/admin/agents/block/add/",
    "/admin/agents/passage/",
    "/admin/agents/approvaldecision/",
    "/admin/agents/approvaldecision/?transport=chat&decided_by=person",
    "/admin/tools/tool/",
    "/admin/tools/tool/add/",
]


@pytest.mark.parametrize("page", ADMIN_PAGES)
def test_it_renders_every_admin_page_for_superusers_and_scoped_staff(admin_client, client, staff, rows, page):
    client.force_login(staff)

    assert admin_client.get(page).status_code == 200
    assert client.get(page).status_code == 200


def test_it_lets_superusers_create_logins_with_lower_cased_emails(admin_client, db):
    password = "a-long-and-unusual-passphrase"

    response = admin_client.post(
        reverse("admin:accounts_user_add"),
        {
            "email": "New@Example.com",
            "name": "New",
            "usable_password": "true",
            "password1": password,
            "password2": password,
        },
    )

    assert response.status_code == 302
    assert User.objects.get(email="new@example.com").check_password(password)


def _decision(agent, run, **item):
    stored = {
        "type": "approval",
        "tool_call_id": "toolu_1",
        "approve": True,
        "reason": None,
        "original_arguments": None,
        "arguments": None,
        "always_allow": False,
        "decided_by": "ada@example.com",
        "decided_by_user_id": 1,
        "decided_by_api_key_id": None,
        "decided_at": "2026-11-30T12:00:00+00:00",
        "transport": run.transport,
        **item,
    }
    return MessageFactory(agent=agent, run=run, role="approval", content=[], approvals=[stored])


def test_it_lists_approval_decisions_read_only_and_filters_them_by_transport(client, staff, rows):
    acme = rows["acme"]
    chat_run = RunFactory(agent=acme["agent"], transport="chat")
    expiry_run = RunFactory(agent=acme["agent"], transport="expiry")
    edited = _decision(acme["agent"], chat_run, original_arguments={"n": 1}, arguments={"n": 2})
    _decision(
        acme["agent"],
        expiry_run,
        approve=False,
        reason="Approval expired after 5 minutes",
        decided_by="Approval expiry",
    )
    _decision(rows["globex"]["agent"], rows["globex"]["run"], decided_by="globex-person@example.com")
    client.force_login(staff)
    url = changelist("agents.approvaldecision")

    everything = client.get(url).content.decode()
    from_the_chat = client.get(url, {"transport": "chat"}).content.decode()

    assert "approved toolu_1, arguments edited" in everything
    assert "denied toolu_1: Approval expired after 5 minutes" in everything
    assert "globex-person@example.com" not in everything
    assert "arguments edited" in from_the_chat and "Approval expired" not in from_the_chat
    assert client.get(change("agents.approvaldecision", edited.pk)).status_code == 200
    assert client.post(change("agents.approvaldecision", edited.pk), {}).status_code == 403
