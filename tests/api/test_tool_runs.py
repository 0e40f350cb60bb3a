"""Running a tool by hand: ``POST /v1/tools/run`` and ``POST /v1/agents/{id}/tools/{name}/run``, in the sandbox."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agents import services
from agents.models import Agent, Passage
from tests.conftest import Cast
from tools.services import tool_upsert_from_source

pytestmark = pytest.mark.django_db

SHOUT = '''
def shout(text: str) -> str:
    """Say it louder.

    Args:
        text: What to say.
    """
    import os
    return text.upper() + os.environ.get("SUFFIX", "")
'''
BROKEN = '''
def broken() -> str:
    """Always fails."""
    raise ValueError("nope")
'''


@pytest.fixture
def agent(cast: Cast) -> Agent:
    tool = tool_upsert_from_source(organization=cast.org_a, source_code=SHOUT)
    return services.agent_create(
        organization=cast.org_a,
        name="runner",
        model="demo/echo-1",
        embedding="demo/hashed-256",
        tool_ids=[tool.public_id],
        tool_env_vars={"SUFFIX": "!!"},
        tool_names=["archival_memory_insert"],
    )


def test_source_runs_in_the_sandbox_and_answers_a_tool_return_message_without_storing_a_tool(
    alice_api: APIClient,
) -> None:
    ran = alice_api.post(
        "/v1/tools/run",
        {"source_code": SHOUT, "args": {"text": "hi"}, "env_vars": {"SUFFIX": "?"}, "name": "shout"},
        format="json",
    ).json()
    failed = alice_api.post("/v1/tools/run", {"source_code": BROKEN, "args": {}}, format="json").json()

    assert (ran["message_type"], ran["id"], ran["tool_call_id"], ran["name"]) == (
        "tool_return_message",
        "null",
        "null",
        "shout",
    )
    assert (ran["tool_return"], ran["status"]) == ("HI?", "success")
    assert ran["tool_returns"][0] == {
        "type": "tool",
        "tool_call_id": "null",
        "tool_return": "HI?",
        "status": "success",
        "stdout": ran["stdout"],
        "stderr": ran["stderr"],
    }
    assert failed["status"] == "error" and "nope" in failed["tool_return"]
    assert alice_api.get("/v1/tools/?name=shout").json() == []


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"source_code": "def x(:\n  pass", "args": {}}, "does not parse"),
        ({"source_code": SHOUT, "args": {}, "source_type": "typescript"}, "Only Python"),
    ],
)
def test_source_that_does_not_parse_or_is_not_python_is_a_400(alice_api: APIClient, body: dict, says: str) -> None:
    response = alice_api.post("/v1/tools/run", body, format="json")

    assert response.status_code == 400
    assert says in response.content.decode()


def test_arguments_that_do_not_fit_the_parameters_are_an_error_result(alice_api: APIClient) -> None:
    ran = alice_api.post("/v1/tools/run", {"source_code": SHOUT, "args": {"text": 3, "x": 1}}, format="json").json()

    assert ran["status"] == "error"


def test_an_agents_tool_runs_with_the_agents_variables_and_a_tool_not_attached_is_a_404(
    alice_api: APIClient, agent: Agent
) -> None:
    url = f"/v1/agents/{agent.public_id}/tools"

    ran = alice_api.post(f"{url}/shout/run", {"args": {"text": "hey"}}, format="json").json()
    missing = alice_api.post(f"{url}/nothing/run", {"args": {}}, format="json")

    assert ran == {
        "status": "success",
        "func_return": "HEY!!",
        "agent_state": None,
        "stdout": [],
        "stderr": [],
        "sandbox_config_fingerprint": None,
    }
    assert missing.status_code == 404
    assert missing.json()["detail"] == f"Tool 'nothing' not found or not attached to agent '{agent.public_id}'"


def test_an_agents_memory_tool_really_changes_memory(alice_api: APIClient, agent: Agent) -> None:
    ran = alice_api.post(
        f"/v1/agents/{agent.public_id}/tools/archival_memory_insert/run",
        {"args": {"content": "ran by hand"}},
        format="json",
    ).json()

    assert ran["status"] == "success"
    assert list(Passage.objects.filter(agent=agent).values_list("text", flat=True)) == ["ran by hand"]


def test_a_tool_that_asks_for_approval_is_refused_and_not_run(alice_api: APIClient, agent: Agent) -> None:
    approval = f"/v1/agents/{agent.public_id}/tools/approval/archival_memory_insert"
    assert alice_api.patch(approval, {"requires_approval": True}, format="json").status_code == 200

    refused = alice_api.post(
        f"/v1/agents/{agent.public_id}/tools/archival_memory_insert/run",
        {"args": {"content": "sneaked in"}},
        format="json",
    )

    assert refused.status_code == 403
    assert "requires approval" in refused.json()["detail"]
    assert not Passage.objects.filter(agent=agent).exists()
