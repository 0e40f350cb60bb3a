"""A file dropped into an agent's chat goes to the agent's folder (a new one named for the agent, attached
with its file tools, when it has none), answers the note the page sends the agent, and a refused file
changes nothing; another organization's agent is a 404."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.urls import reverse

from folders import attachments, services
from folders.models import FileAgent, FileMetadata, Folder, FolderAgent
from tests.folders.conftest import upload_file
from tools.models import AgentTool

if TYPE_CHECKING:
    from django.test import Client

    from agents.models import Agent
    from tests.conftest import Cast

pytestmark = pytest.mark.django_db(transaction=True)


def _drop(client: Client, agent: Agent, *args: Any) -> Any:
    return client.post(
        reverse("agents:chat_upload", kwargs={"agent_id": agent.public_id}), {"file": upload_file(*args)}
    )


def test_a_drop_into_an_agent_without_folders_makes_one_named_for_it_attaches_it_and_opens_the_file(
    client: Client, cast: Cast, agent: Agent
) -> None:
    client.force_login(cast.alice)

    answer = _drop(client, agent, "notes.md").json()

    folder = Folder.objects.get(organization=cast.org_a)
    assert folder.name == agent.name
    assert FolderAgent.objects.filter(agent=agent, folder=folder).exists()
    assert {"open_files", "grep_files", "semantic_search_files"} <= set(
        AgentTool.objects.filter(agent=agent).values_list("tool__name", flat=True)
    )
    assert answer["file"]["file_name"] == f"{agent.name}/notes.md"
    assert answer["file"]["processing_status"] == "completed"
    assert answer["folder"] == agent.name
    assert answer["note"] == (
        f"I uploaded the file {agent.name}/notes.md to the folder {agent.name}. "
        "Read it with open_files, grep_files or semantic_search_files."
    )
    assert FileAgent.objects.get(agent=agent).is_open


def test_a_drop_goes_to_the_agents_first_attached_folder_and_a_taken_name_is_not_reused(
    client: Client, cast: Cast, agent: Agent
) -> None:
    services.folder_create(organization=cast.org_a, name=agent.name)  # someone else's folder of that name
    first = services.folder_create(organization=cast.org_a, name="manuals")
    attachments.folder_attach(agent=agent, folder=first)
    attachments.folder_attach(agent=agent, folder=services.folder_create(organization=cast.org_a, name="later"))
    client.force_login(cast.alice)

    answer = _drop(client, agent, "notes.md").json()

    assert answer["folder"] == "manuals"
    assert FileMetadata.objects.get().folder == first


def test_a_refused_drop_says_why_with_its_status_and_makes_no_folder(client: Client, cast: Cast, agent: Agent) -> None:
    client.force_login(cast.alice)

    unsupported = _drop(client, agent, "tool.exe", b"MZ", "application/x-msdownload")
    empty = _drop(client, agent, "empty.txt", b"", "text/plain")

    assert unsupported.status_code == 415
    assert unsupported.json()["detail"].startswith("Unsupported file type: application/x-msdownload")
    assert empty.status_code == 400
    assert empty.json()["detail"] == "The file empty.txt is empty"
    assert not Folder.objects.exists() and not FileMetadata.objects.exists()


def test_another_organizations_agent_takes_no_drop(client: Client, cast: Cast, agent: Agent) -> None:
    client.force_login(cast.charlie)

    response = _drop(client, agent, "notes.md")

    assert response.status_code == 404
    assert not Folder.objects.exists()
