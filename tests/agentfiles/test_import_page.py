"""The "Import agent" page (upload, preview, import) and the agent page's "Export"."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from agents import services
from agents.models import Agent
from tests.agentfiles.test_import_api import FIXTURES, row_counts

if TYPE_CHECKING:
    from django.test import Client

    from tests.conftest import Cast

pytestmark = pytest.mark.django_db

LOOP = "v2-297e8217e952_loop.af"


def test_the_agents_page_offers_the_import(client: Client, cast: Cast) -> None:
    client.force_login(cast.alice)

    content = client.get(reverse("agents:list")).content.decode()

    assert reverse("agentfiles:import") in content
    assert "Import agent" in content


def test_a_preview_shows_what_will_be_created_and_creates_nothing(client: Client, cast: Cast) -> None:
    client.force_login(cast.alice)
    before = row_counts()

    response = client.post(
        reverse("agentfiles:import"),
        {"file": SimpleUploadedFile(LOOP, (FIXTURES / LOOP).read_bytes()), "model": "demo/echo-1", "preview": "1"},
    )

    content = response.content.decode()
    assert response.status_code == 200
    assert "Loop_copy" in content
    assert "9 blocks" in content
    assert "<code>note</code>" in content
    assert row_counts() == before


def test_preview_then_import_creates_the_agent_with_the_chosen_model(client: Client, cast: Cast) -> None:
    client.force_login(cast.alice)
    preview = client.post(
        reverse("agentfiles:import"),
        {"file": SimpleUploadedFile(LOOP, (FIXTURES / LOOP).read_bytes()), "model": "demo/echo-1", "preview": "1"},
    )
    token = preview.context["token"]

    response = client.post(
        reverse("agentfiles:import"), {"token": token, "model": "demo/echo-1", "name": "", "import": "1"}
    )

    agent = Agent.objects.get(organization=cast.org_a, name="Loop_copy")
    assert response.status_code == 302
    assert response["Location"] == reverse("agents:chat", kwargs={"agent_id": agent.public_id})
    assert agent.model == "demo/echo-1"


def test_a_bad_file_shows_the_error_and_creates_nothing(client: Client, cast: Cast) -> None:
    client.force_login(cast.alice)
    before = row_counts()

    response = client.post(
        reverse("agentfiles:import"), {"file": SimpleUploadedFile("x.af", b"{not json"), "preview": "1"}
    )

    assert response.status_code == 400
    assert "Corrupted agent file format" in response.content.decode()
    assert row_counts() == before


def test_another_organizations_preview_token_is_not_found(client: Client, cast: Cast) -> None:
    client.force_login(cast.alice)
    token = client.post(
        reverse("agentfiles:import"), {"file": SimpleUploadedFile(LOOP, (FIXTURES / LOOP).read_bytes()), "preview": "1"}
    ).context["token"]
    client.force_login(cast.charlie)

    response = client.post(reverse("agentfiles:import"), {"token": token, "import": "1"})

    assert response.status_code == 400
    assert "no longer kept" in response.content.decode()
    assert not Agent.objects.filter(organization=cast.org_b, name="Loop_copy").exists()


def test_export_downloads_the_agent_file_and_another_org_gets_a_404(client: Client, cast: Cast) -> None:
    agent = services.agent_create(organization=cast.org_a, name="My helper", model="demo/echo-1")
    client.force_login(cast.alice)

    response = client.get(reverse("agentfiles:export", kwargs={"agent_id": agent.public_id}))
    client.force_login(cast.charlie)
    other = client.get(reverse("agentfiles:export", kwargs={"agent_id": agent.public_id}))

    assert response["Content-Disposition"] == 'attachment; filename="My_helper.af"'
    assert json.loads(response.content)["agents"][0]["name"] == "My helper"
    assert other.status_code == 404
