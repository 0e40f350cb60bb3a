"""Issue 14 item 8 (rest): sign-up answers the same whether or not an address has an account."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from django.core import mail
from django.urls import reverse

from accounts.models import User

if TYPE_CHECKING:
    from tests.conftest import Cast

pytestmark = pytest.mark.django_db

FORM = {"name": "Someone", "password": "a-long-and-unusual-passphrase", "organization_name": "Probe Inc"}


def visible_answer(response, email: str) -> tuple[int, str]:
    """What the visitor sees, with the address they typed taken out (the page repeats it)."""
    page = response.content.decode().replace(email, "EMAIL")
    page = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", page)
    return response.status_code, page


def test_sign_up_shows_the_same_page_for_a_known_and_an_unknown_address(client, cast: Cast):
    known = client.post(reverse("accounts:signup"), {**FORM, "email": cast.alice.email})
    unknown = client.post(reverse("accounts:signup"), {**FORM, "email": "nobody-yet@example.com"})

    assert visible_answer(known, cast.alice.email) == visible_answer(unknown, "nobody-yet@example.com")
    assert known.status_code == 200 and "Check your email" in known.content.decode()
    assert not User.objects.filter(email="nobody-yet@example.com").exists()  # nothing until confirmed
    # The owner of the known address is told; the new one gets a link.
    notice, link = mail.outbox
    assert notice.to == [cast.alice.email] and "already has one" in notice.body
    assert "/signup/confirm/" not in notice.body
    assert link.to == ["nobody-yet@example.com"] and "/accounts/signup/confirm/" in link.body
