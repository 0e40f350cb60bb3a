from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.access import SESSION_ORGANIZATION_KEY
from tests.factories import MembershipFactory, OrganizationFactory

pytestmark = pytest.mark.django_db


def test_it_switches_to_another_organization_of_the_user(client, cast):
    MembershipFactory(user=cast.alice, organization=cast.org_b)
    client.force_login(cast.alice)

    response = client.post(reverse("accounts:organization_switch"), {"organization": cast.org_b.public_id})

    assert response.status_code == 302
    assert client.session[SESSION_ORGANIZATION_KEY] == str(cast.org_b.pk)
    assert client.get(reverse("accounts:members")).context["current_organization"] == cast.org_b


def test_it_offers_the_switcher_only_to_people_in_several_organizations(client, cast):
    client.force_login(cast.alice)
    assert b"organization-switcher" not in client.get(reverse("accounts:members")).content

    MembershipFactory(user=cast.alice, organization=cast.org_b)

    content = client.get(reverse("accounts:members")).content.decode()
    assert "organization-switcher" in content
    assert cast.org_b.public_id in content


def test_it_rejects_other_org(client, cast):
    client.force_login(cast.alice)

    response = client.post(reverse("accounts:organization_switch"), {"organization": cast.org_b.public_id})

    assert response.status_code == 404
    assert SESSION_ORGANIZATION_KEY not in client.session
    assert client.get(reverse("accounts:members")).context["current_organization"] == cast.org_a


def test_it_answers_404_for_a_malformed_organization_id(client, cast):
    client.force_login(cast.alice)

    assert client.post(reverse("accounts:organization_switch"), {"organization": "org-nope"}).status_code == 404


def test_it_only_switches_on_post(client, cast):
    client.force_login(cast.alice)

    assert client.get(reverse("accounts:organization_switch")).status_code == 405


def test_it_creates_another_organization_owned_by_the_user(client, cast):
    client.force_login(cast.bob)

    client.post(reverse("accounts:organization_create"), {"name": "Bob's lab"})

    new = cast.bob.organizations().exclude(pk=cast.org_a.pk).get()
    assert new.memberships.get().role == "owner"
    assert client.session[SESSION_ORGANIZATION_KEY] == str(new.pk)


def test_it_sends_someone_without_an_organization_to_create_one(client, db):
    user = MembershipFactory(organization=OrganizationFactory()).user
    user.memberships.all().delete()
    client.force_login(user)

    response = client.get(reverse("accounts:members"))

    assert response.url == reverse("accounts:organization_create")
