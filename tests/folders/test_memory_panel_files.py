"""The chat's memory panel lists the files of the agent's folders as the server words them (open or
closed, the lines in view), on the page's first load, the memory JSON and a run's end; a change of
the open files outside a run reaches the agent's tabs as one ``files_updated`` payload, after commit."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import get_channel_layer
from django.urls import reverse

from agents.broadcast import agent_group
from folders import attachments, services
from folders.models import FileMetadata
from tests.folders.conftest import upload_file

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.test import Client
    from rest_framework.test import APIClient

    from agents.models import Agent
    from tests.conftest import Cast

pytestmark = pytest.mark.django_db(transaction=True)

QUIET_S = 1.0
PLAN = b"first step\nsecond step\nthird step\nfourth step\n"


@pytest.fixture
def reader(agent: Agent) -> Agent:
    """The agent with a folder of two files attached: ``manuals/notes.md`` and ``manuals/plan.txt``."""
    folder = services.folder_create(organization=agent.organization, name="manuals")
    services.file_upload(folder=folder, upload=upload_file("notes.md"))
    services.file_upload(folder=folder, upload=upload_file("plan.txt", PLAN, "text/plain"))
    attachments.folder_attach(agent=agent, folder=folder)
    return agent


def _panel(client: Client, agent: Agent) -> list[tuple[str, str, str]]:
    state = client.get(reverse("agents:chat_memory", kwargs={"agent_id": agent.public_id})).json()
    return [(file["name"], file["status"], file["range"]) for file in state["files"]]


def test_the_panel_lists_open_files_with_their_lines_most_recent_first_and_closed_ones_after(
    client: Client, cast: Cast, reader: Agent
) -> None:
    plan = FileMetadata.objects.get(original_file_name="plan.txt")
    notes = FileMetadata.objects.get(original_file_name="notes.md")
    client.force_login(cast.alice)

    attachments.file_open(agent=reader, file=plan, start=1, end=3)
    ranged = _panel(client, reader)
    attachments.file_close(agent=reader, file=plan)
    closed = _panel(client, reader)
    first_page = client.get(reverse("agents:chat_history", kwargs={"agent_id": reader.public_id})).json()
    notes_lines = len(attachments.lines_of(notes))

    assert ranged == [
        ("manuals/plan.txt", "open", "Lines 2 to 3 of 4"),
        ("manuals/notes.md", "open", f"All {notes_lines} lines"),
    ]
    assert closed == [
        ("manuals/notes.md", "open", f"All {notes_lines} lines"),
        ("manuals/plan.txt", "closed", "Closed: not in the agent's context"),
    ]
    assert [file["name"] for file in first_page["files"]] == ["manuals/notes.md", "manuals/plan.txt"]


def test_an_agent_without_folders_shows_no_files_and_another_orgs_panel_is_a_404(
    client: Client, cast: Cast, agent: Agent
) -> None:
    client.force_login(cast.alice)
    mine = client.get(reverse("agents:chat_memory", kwargs={"agent_id": agent.public_id})).json()
    client.force_login(cast.charlie)
    theirs = client.get(reverse("agents:chat_memory", kwargs={"agent_id": agent.public_id}))

    assert mine["files"] == []
    assert theirs.status_code == 404


def _heard_while(agent: Agent, action: Callable[[], Any]) -> tuple[Any, list[dict[str, Any]]]:
    """What ``action`` answers, and every payload the agent's group got until a second passes without one."""

    async def listen() -> tuple[Any, list[dict[str, Any]]]:
        layer = get_channel_layer()
        channel = await layer.new_channel()
        await layer.group_add(agent_group(agent.pk), channel)
        answer = await sync_to_async(action)()
        heard: list[dict[str, Any]] = []
        while True:
            try:
                heard += (await asyncio.wait_for(layer.receive(channel), QUIET_S))["events"]
            except TimeoutError:
                return answer, heard

    return async_to_sync(listen)()


def test_closing_a_file_over_the_api_tells_the_agents_tabs_once_with_the_new_list(
    alice_api: APIClient, reader: Agent
) -> None:
    plan = FileMetadata.objects.get(original_file_name="plan.txt")
    api = f"/v1/agents/{reader.public_id}/files"

    closed, [payload] = _heard_while(reader, lambda: alice_api.patch(f"{api}/{plan.public_id}/close"))
    closed_all, [after_all] = _heard_while(reader, lambda: alice_api.patch(f"{api}/close-all"))

    assert closed.status_code == 200
    assert payload["type"] == "files_updated"
    assert [(file["name"], file["status"]) for file in payload["files"]] == [
        ("manuals/notes.md", "open"),
        ("manuals/plan.txt", "closed"),
    ]
    assert closed_all.status_code == 200
    assert {file["status"] for file in after_all["files"]} == {"closed"}


def test_attaching_a_folder_of_several_files_is_one_payload_not_one_per_file(agent: Agent) -> None:
    folder = services.folder_create(organization=agent.organization, name="manuals")
    services.file_upload(folder=folder, upload=upload_file("notes.md"))
    services.file_upload(folder=folder, upload=upload_file("plan.txt", PLAN, "text/plain"))

    _, attached = _heard_while(agent, lambda: attachments.folder_attach(agent=agent, folder=folder))
    _, detached = _heard_while(agent, lambda: attachments.folder_detach(agent=agent, folder=folder))

    assert [len(payload["files"]) for payload in attached] == [2]
    assert [len(payload["files"]) for payload in detached] == [0]
