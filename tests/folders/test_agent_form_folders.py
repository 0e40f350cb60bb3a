"""The agent form attaches and detaches folders through ``folders.attachments``, as the API does: the
file tools come with the first folder and go with the last, the folder's files open in the agent's
context, and another organization's folder is not a choice."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from django.urls import reverse

from agents.models import Agent
from folders import services
from folders.models import FileAgent, FolderAgent
from tests.factories import ToolFactory
from tests.folders.conftest import upload_file
from tools.models import AgentTool, Tool

if TYPE_CHECKING:
    from django.test import Client

    from tests.conftest import Cast

pytestmark = pytest.mark.django_db(transaction=True)

FILE_TOOLS = {"open_files", "grep_files", "semantic_search_files"}


def _tool_names(agent: Agent) -> set[str]:
    return set(AgentTool.objects.filter(agent=agent).values_list("tool__name", flat=True))


def _form(name: str, **fields: object) -> dict[str, object]:
    """The form as a browser posts it: every tool's approval select sits at its default."""
    policies = {f"approval_{tool.pk.hex}": "inherit" for tool in Tool.objects.all()}
    return {"name": name, "model": "demo/echo-1", "system": "Be brief.", **policies, **fields}


def test_creating_an_agent_with_a_folder_attaches_it_its_file_tools_and_opens_its_files(
    client: Client, cast: Cast
) -> None:
    folder = services.folder_create(organization=cast.org_a, name="manuals")
    services.file_upload(folder=folder, upload=upload_file("notes.md"))
    dice = ToolFactory(organization=cast.org_a, name="roll_dice")
    client.force_login(cast.alice)

    page = client.get(reverse("agents:create")).content.decode()
    response = client.post(reverse("agents:create"), _form("Reader", tools=[str(dice.pk)], folders=[str(folder.pk)]))

    agent = Agent.objects.get(organization=cast.org_a, name="Reader")
    assert 'name="folders"' in page and "manuals" in page
    assert response.status_code == 302
    assert list(FolderAgent.objects.filter(agent=agent).values_list("folder_id", flat=True)) == [folder.pk]
    assert _tool_names(agent) == {"roll_dice", *FILE_TOOLS}
    assert list(FileAgent.objects.filter(agent=agent).values_list("file_name", "is_open")) == [
        ("manuals/notes.md", True)
    ]


def test_editing_an_agent_shows_its_folders_checked_and_unchecking_the_last_detaches_it_and_the_tools(
    client: Client, cast: Cast
) -> None:
    kept = services.folder_create(organization=cast.org_a, name="kept")
    dropped = services.folder_create(organization=cast.org_a, name="dropped")
    services.file_upload(folder=dropped, upload=upload_file("notes.md"))
    client.force_login(cast.alice)
    client.post(reverse("agents:create"), _form("Reader", folders=[str(dropped.pk)]))
    agent = Agent.objects.get(name="Reader")
    edit = reverse("agents:edit", kwargs={"agent_id": agent.public_id})

    page = client.get(edit).content.decode()
    swapped = client.post(edit, _form("Reader", folders=[str(kept.pk)]))
    after_swap = set(FolderAgent.objects.filter(agent=agent).values_list("folder__name", flat=True))
    tools_after_swap = _tool_names(agent)
    client.post(edit, _form("Reader", folders=[]))

    assert re.search(rf'name="folders" value="{dropped.pk}"[^>]*checked', page)
    assert not re.search(rf'name="folders" value="{kept.pk}"[^>]*checked', page)
    assert swapped.status_code == 302
    assert after_swap == {"kept"}
    assert FileAgent.objects.filter(agent=agent, folder=dropped).count() == 0
    assert tools_after_swap == FILE_TOOLS
    assert not FolderAgent.objects.filter(agent=agent).exists()
    assert _tool_names(agent) == set()


def test_another_organizations_folder_is_not_a_choice_of_the_agent_form(client: Client, cast: Cast) -> None:
    theirs = services.folder_create(organization=cast.org_b, name="globex-secrets")
    client.force_login(cast.alice)

    page = client.get(reverse("agents:create")).content.decode()
    response = client.post(reverse("agents:create"), _form("Reader", folders=[str(theirs.pk)]))

    assert "globex-secrets" not in page
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert not Agent.objects.filter(name="Reader").exists()
    assert not FolderAgent.objects.filter(folder=theirs).exists()
