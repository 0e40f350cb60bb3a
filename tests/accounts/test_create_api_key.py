"""``manage.py create_api_key``: an organization's key for scripts and CI, printed on the last line."""

from __future__ import annotations

import pytest
from django.core.management import CommandError

from accounts.models import ApiKey, Membership, Organization, Role, User
from tests.factories import DEFAULT_PASSWORD
from tests.support.commands import authenticates, run

pytestmark = pytest.mark.django_db


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
