"""Folders attached to an agent: the file tools, and open files in the next model request (Letta's
``<directories>`` section), asserted on what the fake model server received."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from asgiref.sync import async_to_sync

from agents.engine.events import RunFinishedEvent
from agents.engine.inputs import UserInput
from agents.models import Agent, Run
from agents.runs.turns import TurnSetup, open_turn
from folders.context import directories_section
from folders.models import FileAgent, Folder
from tests.factories import AgentFactory
from tests.fake_llm.script import Reply
from tests.folders.conftest import upload
from tests.memory.test_memory_in_requests import system_of
from tests.support.api import api_client

if TYPE_CHECKING:
    from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db(transaction=True)

GUIDE = "\n".join(f"Step {n}: turn valve {n} clockwise." for n in range(1, 41))


@pytest.fixture
def agent(settings: Any, fake_llm: Any) -> Agent:
    settings.ANTHROPIC_BASE_URL = fake_llm.url
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    return AgentFactory(name="reader", model="anthropic/claude-sonnet-4-5-20250929", context_window=32_000)


@pytest.fixture
def api(agent: Agent) -> APIClient:
    return api_client(agent.organization)


@pytest.fixture
def folder(api: APIClient, agent: Agent) -> dict[str, Any]:
    body = {"name": "docs", "embedding": "demo/hash", "description": "Plant manuals", "instructions": "Cite files."}
    folder = api.post("/v1/folders/", body, format="json").json()
    assert upload(api, folder["id"], "notes.md").status_code == 200
    assert upload(api, folder["id"], "guide.txt", GUIDE.encode()).status_code == 200
    assert upload(api, folder["id"], "guide.pdf").status_code == 200
    return folder


def attach(api: APIClient, agent: Agent, folder: dict[str, Any], **headers: str) -> Any:
    return api.patch(f"/v1/agents/{agent.public_id}/folders/attach/{folder['id']}", **headers)


def turn(agent: Agent, text: str) -> RunFinishedEvent:
    async def run() -> RunFinishedEvent:
        row = await Run.objects.acreate(organization_id=agent.organization_id, agent=agent)
        opened = await open_turn(TurnSetup(run=row, turn_input=[UserInput(text)]))
        events = [event async for event in opened.events()]
        assert isinstance(events[-1], RunFinishedEvent)
        return events[-1]

    return async_to_sync(run)()


def tool_result(body: dict[str, Any]) -> str:
    """The last tool result in a recorded Anthropic request."""
    for message in reversed(body["messages"]):
        for part in message["content"] if isinstance(message["content"], list) else []:
            if part.get("type") == "tool_result":
                content = part["content"]
                text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
                return json.loads(text).get("message", text) if text.startswith("{") else text
    raise AssertionError("no tool result in the request")


def result_of_one_call(agent: Agent, fake_llm: Any, call: tuple[str, dict[str, Any]], question: str) -> str:
    """Ask ``question``; the model makes ``call``, then answers: the tool result the model was sent."""
    fake_llm.script(Reply(tool_calls=[call]), Reply(text="Done."))
    turn(agent, question)
    return tool_result(fake_llm.requests[-1].body)


def test_attaching_a_folder_attaches_the_file_tools_and_opens_its_files(
    api: APIClient, agent: Agent, folder: dict[str, Any]
) -> None:
    old_client = attach(api, agent, folder)
    new_client = attach(api, agent, folder, HTTP_X_STAINLESS_PACKAGE_VERSION="1.12.1")

    assert old_client.status_code == 200
    assert {"open_files", "grep_files", "semantic_search_files"} <= {t["name"] for t in old_client.json()["tools"]}
    assert new_client.json() is None
    files = api.get(f"/v1/agents/{agent.public_id}/files").json()
    assert files["has_more"] is False
    assert sorted((f["file_name"], f["is_open"]) for f in files["files"]) == [
        ("docs/guide.pdf", True),
        ("docs/guide.txt", True),
        ("docs/notes.md", True),
    ]
    assert [f["name"] for f in api.get(f"/v1/agents/{agent.public_id}/folders").json()] == ["docs"]


def test_an_agents_folders_page_by_after_so_the_1x_pager_stops(
    api: APIClient, agent: Agent, folder: dict[str, Any]
) -> None:
    second = api.post("/v1/folders/", {"name": "more", "embedding": "demo/hash"}, format="json").json()
    attach(api, agent, folder)
    attach(api, agent, second)
    path = f"/v1/agents/{agent.public_id}/folders"

    first_page = api.get(path, {"limit": 1}).json()
    next_page = api.get(path, {"limit": 1, "after": first_page[0]["id"]}).json()
    last_page = api.get(path, {"after": next_page[0]["id"]}).json()

    assert [page[0]["name"] for page in (first_page, next_page)] == ["more", "docs"]
    assert last_page == []
    assert [f["name"] for f in api.get(path, {"order": "asc"}).json()] == ["docs", "more"]


def test_the_open_files_are_in_the_next_requests_system_prompt_in_letta_format(
    api: APIClient, agent: Agent, folder: dict[str, Any], fake_llm: Any
) -> None:
    attach(api, agent, folder)
    fake_llm.script(Reply(text="Read it."))

    turn(agent, "what do the notes say?")

    system = system_of(fake_llm.last_request.body)
    assert "</memory_blocks>\n\n<directories>\n<file_limits>\n- current_files_open=3\n- max_files_open=5\n" in system
    assert '<directory name="docs">\n<description>Plant manuals</description>\n<instructions>Cite files.' in system
    assert '<file status="open" name="docs/notes.md">\n<metadata>\n- read_only=true\n' in system
    assert "[Viewing file start (out of 5 lines)]\n1: # Release notes\n2: Version 2 adds folders." in system
    assert "5: The codename is Marmalade.\n</value>\n</file>" in system
    assert "</directories>\n\n<memory_metadata>" in system


def test_open_files_with_a_range_puts_those_lines_into_the_next_request(
    api: APIClient, agent: Agent, folder: dict[str, Any], fake_llm: Any
) -> None:
    attach(api, agent, folder)
    api.patch(f"/v1/agents/{agent.public_id}/files/close-all")
    request = {"file_requests": [{"file_name": "docs/guide.txt", "offset": 10, "length": 3}]}
    fake_llm.script(Reply(tool_calls=[("open_files", request)]), Reply(text="Valve 11 first."))

    finished = turn(agent, "open the guide at step 11")

    assert finished.stop_reason == "end_turn"
    before, after = (system_of(r.body) for r in fake_llm.requests[-2:])
    assert "Step 11" not in before
    assert "[Viewing lines 11 to 13 (out of 40 lines)]\n11: Step 11: turn valve 11 clockwise." in after
    assert "13: Step 13: turn valve 13 clockwise.\n</value>" in after
    assert "Step 14" not in after and "Step 10:" not in after
    assert tool_result(fake_llm.requests[-1].body) == "* Opened docs/guide.txt (lines 11-13)"


def test_grep_files_answers_from_the_files_in_letta_format(
    api: APIClient, agent: Agent, folder: dict[str, Any], fake_llm: Any
) -> None:
    attach(api, agent, folder)

    result = result_of_one_call(
        agent, fake_llm, ("grep_files", {"pattern": "marmalade|pelican"}), "what is the codename?"
    )

    assert result.startswith("Found 2 total matches across 2 files (showing matches 1-2 of 2)\n" + "=" * 80)
    assert "  - docs/guide.pdf: 1 matches\n  - docs/notes.md: 1 matches" in result
    assert (
        "=== docs/notes.md:5 ===\n    4: - Agents grep them with grep_files.\n  > 5: The codename is Marmalade."
        in result
    )
    assert result.endswith("No more matches to show.")


def test_grep_files_refuses_a_pattern_re2_cannot_run_and_finds_nothing_quietly(
    agent: Agent, api: APIClient, folder: dict[str, Any], fake_llm: Any
) -> None:
    attach(api, agent, folder)
    fake_llm.script(
        Reply(tool_calls=[("grep_files", {"pattern": "(a+)+\\1"})]),
        Reply(tool_calls=[("grep_files", {"pattern": "zebra", "include": "*.md"})]),
        Reply(text="Nothing."),
    )

    turn(agent, "search")

    assert "Invalid regex pattern" in tool_result(fake_llm.requests[-2].body)
    assert tool_result(fake_llm.requests[-1].body) == "No matches found for pattern: 'zebra' in files matching '*.md'"


def test_semantic_search_files_finds_the_passage_by_meaning(
    api: APIClient, agent: Agent, folder: dict[str, Any], fake_llm: Any
) -> None:
    attach(api, agent, folder)

    result = result_of_one_call(agent, fake_llm, ("semantic_search_files", {"query": "database port"}), "which port?")

    header = result.splitlines()[0]
    assert header.startswith("Found ") and header.endswith("for query: 'database port'")
    assert result.splitlines()[1] == "=" * len(header)
    first = result.split("\n=== ")[1]
    assert first.startswith("docs/guide.pdf (passage #1) ===\n  ")
    assert "The pelican database listens on port 5433." in first


def test_opening_past_the_limit_closes_the_least_recently_used(api: APIClient, agent: Agent) -> None:
    agent.context_window = 8_000  # Letta's limit for a window this size: 3 files open
    agent.save(update_fields=["context_window"])
    folder = api.post("/v1/folders/", {"name": "many", "embedding": "demo/x"}, format="json").json()
    ids = [upload(api, folder["id"], f"f{n}.txt", f"file {n}".encode()).json()["id"] for n in range(4)]

    attach(api, agent, folder)
    closed = api.patch(f"/v1/agents/{agent.public_id}/files/{ids[0]}/open").json()

    open_names = {row.file_name for row in FileAgent.objects.filter(agent=agent, is_open=True)}
    assert len(open_names) == 3 and "many/f0.txt" in open_names
    assert len(closed) == 1 and closed[0] not in open_names
    assert api.patch(f"/v1/agents/{agent.public_id}/files/{ids[0]}/close").json() == {
        "message": f"File id={ids[0]} successfully closed"
    }


def test_detaching_the_last_folder_removes_its_files_and_the_file_tools(
    api: APIClient, agent: Agent, folder: dict[str, Any]
) -> None:
    attach(api, agent, folder)

    state = api.patch(f"/v1/agents/{agent.public_id}/folders/detach/{folder['id']}").json()

    assert not {"open_files", "grep_files", "semantic_search_files"} & {t["name"] for t in state["tools"]}
    assert FileAgent.objects.filter(agent=agent).count() == 0
    assert directories_section(organization_id=agent.organization_id, agent_id=agent.pk) == ""


def test_a_file_uploaded_after_attaching_opens_in_the_agent_once_parsed(api: APIClient, agent: Agent) -> None:
    folder = api.post("/v1/folders/", {"name": "later", "embedding": "demo/x"}, format="json").json()
    attach(api, agent, folder)

    upload(api, folder["id"], "notes.md")

    row = FileAgent.objects.get(agent=agent)
    assert (row.file_name, row.is_open) == ("later/notes.md", True)
    assert "Marmalade" in row.visible_content


def test_another_organizations_agent_never_sees_the_files(api: APIClient, agent: Agent, folder: dict) -> None:
    attach(api, agent, folder)
    stranger = AgentFactory(name="stranger")

    section = directories_section(organization_id=stranger.organization_id, agent_id=agent.pk)

    assert section == ""
    assert Folder.objects.for_org(stranger.organization_id).count() == 0
