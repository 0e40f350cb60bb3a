"""The chat's memory panel endpoints and the archival memory page: org-scoped, CSRF-protected, thin."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from agents.memory import archival
from agents.memory import services as memory_services
from agents.models import Agent, Block, Passage
from tests.conftest import Cast
from tests.factories import keeper_agent

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(cast: Cast) -> Agent:
    return keeper_agent(cast.org_a, human_limit=40)


def block(agent: Agent, label: str) -> Block:
    return Block.objects.get(agent_blocks__agent=agent, label=label)


def save(client: Client, agent: Agent, block_id: str, value: Any, **extra: Any) -> Any:
    url = reverse("agents:chat_block_save", kwargs={"agent_id": agent.public_id, "block_id": block_id})
    return client.post(url, json.dumps({"value": value}), content_type="application/json", **extra)


def test_the_first_history_page_carries_the_blocks_and_the_context_meter(client: Client, cast: Cast, agent: Agent):
    client.force_login(cast.bob)

    first = client.get(reverse("agents:chat_history", kwargs={"agent_id": agent.public_id})).json()

    assert [(b["label"], b["chars"], b["limit"], b["read_only"]) for b in first["memory"]] == [
        ("human", 11, 40, False),
        ("persona", 20, 20000, True),
    ]
    assert first["context"]["max"] == agent.context_window
    assert 0 < first["context"]["current"] < first["context"]["max"]


def test_the_memory_endpoint_gives_the_panel_its_state(client: Client, cast: Cast, agent: Agent):
    client.force_login(cast.bob)

    state = client.get(reverse("agents:chat_memory", kwargs={"agent_id": agent.public_id})).json()

    assert [b["value"] for b in state["memory"]] == ["Name: Alice", "A careful archivist."]
    assert set(state["context"]) == {"current", "max", "estimated"}


def test_a_person_saves_a_block_from_the_panel(
    client: Client, cast: Cast, agent: Agent, django_capture_on_commit_callbacks
):
    client.force_login(cast.bob)
    human = block(agent, "human")

    with django_capture_on_commit_callbacks() as callbacks:
        response = save(client, agent, human.public_id, "Name: Alice Liddell")

    assert response.status_code == 200
    assert response.json()["block"] == memory_services.panel_block(block(agent, "human"))
    assert block(agent, "human").value == "Name: Alice Liddell"
    assert len(callbacks) == 1  # the memory_updated announcement, sent once committed


def test_a_value_past_the_limit_is_a_400_naming_the_limit_and_changes_nothing(client: Client, cast: Cast, agent: Agent):
    client.force_login(cast.bob)

    response = save(client, agent, block(agent, "human").public_id, "x" * 41)

    assert response.status_code == 400
    assert response.json() == {"detail": "Edit failed: Exceeds 40 character limit (requested 41)"}
    assert block(agent, "human").value == "Name: Alice"


def test_a_read_only_block_and_a_malformed_body_are_refused(client: Client, cast: Cast, agent: Agent):
    client.force_login(cast.bob)

    read_only = save(client, agent, block(agent, "persona").public_id, "Changed")
    not_text = save(client, agent, block(agent, "human").public_id, 42)

    assert (read_only.status_code, read_only.json()["detail"]) == (400, "This block is read-only.")
    assert not_text.status_code == 400
    assert block(agent, "persona").value == "A careful archivist."


def test_another_organizations_agent_or_a_block_not_attached_to_the_agent_is_a_404(
    client: Client, cast: Cast, agent: Agent
):
    other = memory_services.block_create(organization=cast.org_a, label="loose", value="free")
    client.force_login(cast.charlie)
    cross_org = save(client, agent, block(agent, "human").public_id, "hijacked")
    cross_org_read = client.get(reverse("agents:chat_memory", kwargs={"agent_id": agent.public_id}))
    client.force_login(cast.bob)
    unattached = save(client, agent, other.public_id, "hijacked")

    assert cross_org.status_code == cross_org_read.status_code == unattached.status_code == 404
    assert block(agent, "human").value == "Name: Alice"
    assert Block.objects.get(pk=other.pk).value == "free"


def test_saving_a_block_needs_the_csrf_token(cast: Cast, agent: Agent):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(cast.bob)
    human = block(agent, "human")
    browser.get(reverse("agents:chat", kwargs={"agent_id": agent.public_id}))
    token = browser.cookies["csrftoken"].value

    refused = save(browser, agent, human.public_id, "No token")
    accepted = save(browser, agent, human.public_id, "With token", HTTP_X_CSRFTOKEN=token)

    assert refused.status_code == 403
    assert accepted.status_code == 200
    assert block(agent, "human").value == "With token"


def test_the_chat_page_has_the_memory_panel_linking_to_archival_memory(client: Client, cast: Cast, agent: Agent):
    client.force_login(cast.bob)

    page = client.get(reverse("agents:chat", kwargs={"agent_id": agent.public_id})).content.decode()

    assert 'id="memory-panel"' in page
    assert reverse("agents:archival", kwargs={"agent_id": agent.public_id}) in page
    assert reverse("agents:chat_memory", kwargs={"agent_id": agent.public_id}) in page


# --- the archival memory page ---------------------------------------------------------------


def archival_url(agent: Agent) -> str:
    return reverse("agents:archival", kwargs={"agent_id": agent.public_id})


def test_the_archival_page_adds_lists_newest_first_and_searches(client: Client, cast: Cast, agent: Agent):
    client.force_login(cast.bob)
    archival.passage_insert(agent=agent, text="The user's cat is called Dinah.")

    added = client.post(archival_url(agent), {"text": "Tea at four, always.", "tags": "habits, tea"})
    listed = client.get(archival_url(agent)).content.decode()
    found = client.get(archival_url(agent), {"q": "cat"}).content.decode()

    assert added.status_code == 302
    assert Passage.objects.get(text="Tea at four, always.").tags == ["habits", "tea"]
    assert listed.index("Tea at four") < listed.index("Dinah")
    assert "Dinah" in found and "Tea at four" not in found


def test_a_blank_passage_is_refused_with_the_form_error(client: Client, cast: Cast, agent: Agent):
    client.force_login(cast.bob)

    response = client.post(archival_url(agent), {"text": "   ", "tags": ""})

    assert response.status_code == 200
    assert Passage.objects.count() == 0


def test_deleting_a_passage_and_other_organizations_get_404s(client: Client, cast: Cast, agent: Agent):
    [passage] = archival.passage_insert(agent=agent, text="Secret plans.")
    delete = reverse("agents:archival_delete", kwargs={"agent_id": agent.public_id, "passage_id": passage.public_id})
    client.force_login(cast.charlie)
    cross_page = client.get(archival_url(agent))
    cross_delete = client.post(delete)
    assert cross_page.status_code == cross_delete.status_code == 404
    assert Passage.objects.filter(pk=passage.pk).exists()

    client.force_login(cast.bob)
    deleted = client.post(delete)
    again = client.post(delete)

    assert deleted.status_code == 302
    assert again.status_code == 404
    assert not Passage.objects.filter(pk=passage.pk).exists()
