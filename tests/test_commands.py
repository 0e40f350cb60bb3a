from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client, RequestFactory, override_settings
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.test import APIRequestFactory

from accounts.authentication import ApiKeyAuthentication
from accounts.models import ApiKey, Membership, Organization, Role, User
from agents.models import Agent
from onboarding.demo import DEMO_EMAIL, DEMO_PASSWORD
from tests.factories import DEFAULT_PASSWORD
from tools.models import AgentTool, Tool

pytestmark = pytest.mark.django_db


def run(*args: str) -> list[str]:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().rstrip("\n").splitlines()


def authenticates(raw_key: str) -> bool:
    """Whether ``Authorization: Bearer <raw_key>`` passes the API's authentication."""
    request = APIRequestFactory().get("/v1/", HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    try:
        return ApiKeyAuthentication().authenticate(request) is not None
    except AuthenticationFailed:
        return False


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


def test_create_api_key_creates_the_organization_and_the_user_and_prints_the_key_last():
    lines = run("create_api_key", "--org", "initech", "--email", "Peter@Example.com", "--name", "ci")

    organization = Organization.objects.get(slug="initech")
    user = User.objects.get(email="peter@example.com")
    assert not user.has_usable_password()
    assert Membership.objects.get(user=user, organization=organization).role == Role.OWNER
    key = ApiKey.objects.get()
    assert (key.organization, key.created_by, key.name) == (organization, user, "ci")
    assert lines[-1].startswith(key.prefix)
    assert lines[-1].strip() == lines[-1]
    assert authenticates(lines[-1])


def test_create_api_key_uses_an_existing_organization_and_member(cast):
    lines = run("create_api_key", "--org", "acme", "--email", "bob@example.com", "--name", "bob's script")

    assert Organization.objects.count() == 2
    assert User.objects.filter(email="bob@example.com").get().check_password(DEFAULT_PASSWORD)
    assert Membership.objects.get(user=cast.bob).role == Role.MEMBER
    assert ApiKey.objects.get().organization == cast.org_a
    assert authenticates(lines[-1])


def test_create_api_key_adds_an_existing_user_to_a_new_organization_as_owner(cast):
    run("create_api_key", "--org", "hooli", "--email", "alice@example.com", "--name", "x")

    assert Membership.objects.get(user=cast.alice, organization__slug="hooli").role == Role.OWNER
    assert Membership.objects.get(user=cast.alice, organization=cast.org_a).role == Role.ADMIN


def test_create_api_key_issues_a_new_key_on_every_run(cast):
    first = run("create_api_key", "--org", "acme", "--email", "alice@example.com", "--name", "x")[-1]
    second = run("create_api_key", "--org", "acme", "--email", "alice@example.com", "--name", "x")[-1]

    assert first != second
    assert ApiKey.objects.active().count() == 2


@pytest.mark.parametrize(
    "args",
    [
        ("--org", "not a slug", "--email", "a@example.com", "--name", "x"),
        ("--org", "ok", "--email", "not-an-email", "--name", "x"),
        ("--org", "ok", "--email", "a@example.com", "--name", " "),
    ],
)
def test_create_api_key_refuses_bad_arguments(args):
    with pytest.raises(CommandError):
        run("create_api_key", *args)

    assert not ApiKey.objects.exists()
    assert not Organization.objects.exists()


def test_create_api_key_needs_every_option():
    with pytest.raises(CommandError):
        run("create_api_key", "--org", "acme")
