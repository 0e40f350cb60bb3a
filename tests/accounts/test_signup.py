from __future__ import annotations

import re
import socket

import pytest
from django.core import mail
from django.urls import reverse

from accounts.access import SESSION_ORGANIZATION_KEY
from accounts.models import Membership, Organization, Role, User
from tests.factories import InviteFactory, UserFactory

pytestmark = pytest.mark.django_db


def sign_up(client, data: dict[str, str], path: str = ""):
    """Post the form, follow the emailed link and confirm: what a person does."""
    answer = client.post(reverse("accounts:signup") + path, data)
    assert answer.status_code == 200, answer.content
    link = re.search(r"https?://testserver(/\S+)", mail.outbox[-1].body)
    assert link is not None, mail.outbox[-1].body
    assert client.get(link[1]).status_code == 200
    return client.post(link[1])


SIGNUP = {
    "email": "Dana@Example.com",
    "name": "Dana",
    "password": "a-long-and-unusual-passphrase",
    "organization_name": "Initech",
}


def test_it_creates_the_user_an_organization_and_an_owner_membership(client):
    response = sign_up(client, SIGNUP)

    assert response.status_code == 302
    assert response.url == reverse("agents:list")
    user = User.objects.get()
    assert user.email == "dana@example.com"
    assert user.check_password(SIGNUP["password"])
    organization = Organization.objects.get()
    assert (organization.name, organization.slug) == ("Initech", "initech")
    membership = Membership.objects.get()
    assert (membership.user, membership.organization, membership.role) == (user, organization, Role.OWNER)


def test_it_logs_the_new_user_in_with_the_new_organization_selected(client):
    sign_up(client, SIGNUP)

    assert client.session[SESSION_ORGANIZATION_KEY] == str(Organization.objects.get().pk)
    response = client.get(reverse("accounts:members"))
    assert response.status_code == 200
    assert b"Initech" in response.content


def test_it_gives_a_taken_organization_name_a_fresh_slug(client):
    Organization.objects.create(name="Initech", slug="initech")

    sign_up(client, SIGNUP)

    assert Organization.objects.get(memberships__user__email="dana@example.com").slug == "initech-2"


def test_it_creates_nothing_for_an_email_that_already_has_an_account_in_any_case(client):
    UserFactory(email="dana@example.com")

    response = client.post(reverse("accounts:signup"), SIGNUP)

    assert response.status_code == 200
    assert b"Check your email" in response.content
    assert User.objects.count() == 1
    assert not Organization.objects.exists()
    assert "already has one" in mail.outbox[-1].body


def test_it_creates_nothing_before_the_link_is_confirmed(client):
    client.post(reverse("accounts:signup"), SIGNUP)

    assert not User.objects.exists()
    assert mail.outbox[-1].to == ["dana@example.com"]


def test_a_confirmed_link_cannot_make_a_second_account(client):
    sign_up(client, SIGNUP)
    link = re.search(r"https?://testserver(/\S+)", mail.outbox[-1].body)[1]
    client.logout()

    response = client.post(link)

    assert response.status_code == 410
    assert User.objects.count() == 1


def test_a_tampered_link_is_refused(client):
    response = client.post(reverse("accounts:signup_confirm", kwargs={"token": "not-a-signed-token"}))

    assert response.status_code == 410
    assert not User.objects.exists()


def test_it_refuses_a_weak_password(client):
    response = client.post(reverse("accounts:signup"), {**SIGNUP, "password": "12345678"})

    assert response.status_code == 200
    assert not User.objects.exists()
    assert not Organization.objects.exists()


def test_it_requires_an_organization_name(client):
    response = client.post(reverse("accounts:signup"), {**SIGNUP, "organization_name": ""})

    assert response.status_code == 200
    assert not User.objects.exists()


def test_it_renders_an_accessible_form(client):
    response = client.get(reverse("accounts:signup"))

    assert response.status_code == 200
    content = response.content.decode()
    assert '<html lang="en">' in content
    assert 'name="viewport"' in content
    for field in ("id_email", "id_name", "id_password", "id_organization_name"):
        assert f'for="{field}"' in content


def _refused_port() -> int:
    """A local TCP port nothing listens on: connecting to it is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def mail_server_down(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = _refused_port()
    settings.EMAIL_TIMEOUT = 5
    return settings


def test_with_the_mail_server_down_sign_up_shows_the_message_and_leaves_no_account(client, mail_server_down, caplog):
    answer = client.post(reverse("accounts:signup"), SIGNUP)

    assert answer.status_code == 503
    assert "We could not send the email. Try again later." in answer.content.decode()
    assert not User.objects.exists()
    assert not Organization.objects.exists()
    assert any("Could not send" in record.getMessage() and record.exc_info for record in caplog.records)


def test_with_the_mail_server_down_a_taken_address_gets_the_same_message(client, mail_server_down):
    UserFactory(email="dana@example.com")

    answer = client.post(reverse("accounts:signup"), SIGNUP)

    assert answer.status_code == 503
    assert "We could not send the email. Try again later." in answer.content.decode()


def test_a_closed_sign_up_shows_no_form_and_sends_nothing(client, settings):
    settings.SIGNUP_MODE = "closed"

    answer = client.post(reverse("accounts:signup"), SIGNUP)

    assert answer.status_code == 403
    assert "Sign-up is closed" in answer.content.decode()
    assert not mail.outbox


def test_an_invite_only_sign_up_refuses_anyone_without_an_invite(client, settings):
    settings.SIGNUP_MODE = "invite"

    assert client.get(reverse("accounts:signup")).status_code == 403


def test_an_invite_only_sign_up_takes_a_pending_invite(client, settings):
    settings.SIGNUP_MODE = "invite"
    invite = InviteFactory()

    answer = client.get(reverse("accounts:signup") + f"?invite={invite.token}")

    assert answer.status_code == 200
    assert invite.organization.name in answer.content.decode()
