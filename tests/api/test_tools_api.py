"""``/v1/tools``: create, upsert from source, list, retrieve, modify, delete and the base tools."""

from __future__ import annotations

import inspect
import textwrap

import pytest
from rest_framework.test import APIClient

from tests.conftest import Cast
from tests.factories import AgentToolFactory, ToolFactory
from tests.seed_tools import GET_SECRET_CODE_SOURCE as SECRET_SOURCE
from tools.models import AgentTool, Tool

pytestmark = pytest.mark.django_db


def shout(text: str) -> str:
    """
    Upper-cases a text.
    Args:
        text (str): What to shout.
    """
    return text.upper()


def test_it_upserts_a_tool_from_the_source_upsert_from_function_sends(alice_api: APIClient, cast: Cast) -> None:
    body = {"source_code": SECRET_SOURCE, "args_json_schema": None, "default_requires_approval": True}

    response = alice_api.put("/v1/tools/", body, format="json")

    assert response.status_code == 200
    tool = Tool.objects.get()
    rendered = response.json()
    assert rendered["id"] == tool.public_id
    assert tool.organization == cast.org_a
    assert rendered["name"] == "get_secret_code_tool"
    assert rendered["description"].startswith("A tool that returns the secret code")
    assert rendered["json_schema"]["parameters"] == {
        "type": "object",
        "properties": {"input_text": {"type": "string", "description": "The input text to process."}},
        "required": ["input_text"],
    }
    assert (rendered["tool_type"], rendered["return_char_limit"], rendered["default_requires_approval"]) == (
        "custom",
        50000,
        True,
    )


def test_it_updates_the_same_tool_when_the_source_is_upserted_again(alice_api: APIClient) -> None:
    first = alice_api.put("/v1/tools", {"source_code": SECRET_SOURCE, "default_requires_approval": True}, format="json")
    changed = SECRET_SOURCE.replace("abs(hash(input_text))", "len(input_text)")

    second = alice_api.put("/v1/tools/", {"source_code": changed}, format="json")

    assert second.json()["id"] == first.json()["id"]
    assert Tool.objects.get().source_code == changed


def test_it_creates_a_tool_and_refuses_a_second_with_the_same_name(alice_api: APIClient) -> None:
    source = textwrap.dedent(inspect.getsource(shout))

    created = alice_api.post("/v1/tools/", {"source_code": source}, format="json")
    duplicate = alice_api.post("/v1/tools/", {"source_code": source}, format="json")

    assert created.status_code == 200
    assert created.json()["name"] == "shout"
    assert duplicate.status_code == 409
    assert "shout" in duplicate.json()["detail"]
    assert Tool.objects.count() == 1


def test_it_answers_400_for_source_it_cannot_read(alice_api: APIClient) -> None:
    response = alice_api.put("/v1/tools/", {"source_code": "def broken(:\n"}, format="json")

    assert response.status_code == 400
    assert response.json()["detail"].startswith("INVALID_ARGUMENT:")
    assert not Tool.objects.exists()


def test_it_requires_source_code(alice_api: APIClient) -> None:
    response = alice_api.put("/v1/tools/", {"description": "no source"}, format="json")

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "source_code"]


def test_it_lists_tools_with_filters_and_cursors(alice_api: APIClient, cast: Cast) -> None:
    alpha = ToolFactory(organization=cast.org_a, name="alpha")
    beta = ToolFactory(organization=cast.org_a, name="beta", tool_type="letta_core")
    gamma = ToolFactory(organization=cast.org_a, name="gamma")

    def names(query: dict[str, object]) -> list[str]:
        response = alice_api.get("/v1/tools/", query)
        assert response.status_code == 200
        return [t["name"] for t in response.json()]

    assert names({}) == ["gamma", "beta", "alpha"]
    assert names({"name": "beta"}) == ["beta"]
    assert names({"names": ["alpha", "gamma"]}) == ["gamma", "alpha"]
    assert names({"search": "MM"}) == ["gamma"]
    assert names({"tool_types": "letta_core"}) == ["beta"]
    assert names({"exclude_tool_types": "letta_core"}) == ["gamma", "alpha"]
    assert names({"return_only_letta_tools": "true"}) == ["beta"]
    assert names({"tool_ids": [alpha.public_id]}) == ["alpha"]
    assert names({"limit": 1, "after": beta.public_id}) == ["alpha"]
    assert names({"order": "asc", "before": gamma.public_id}) == ["alpha", "beta"]


def test_it_never_lists_tools_of_another_org(charlie_api: APIClient, cast: Cast) -> None:
    ToolFactory(organization=cast.org_a, name="theirs")
    own = ToolFactory(organization=cast.org_b, name="mine")

    assert [t["id"] for t in charlie_api.get("/v1/tools/").json()] == [own.public_id]


def test_it_retrieves_modifies_and_deletes_a_tool(alice_api: APIClient, cast: Cast) -> None:
    tool = ToolFactory(organization=cast.org_a)
    url = f"/v1/tools/{tool.public_id}"

    assert alice_api.get(url).json()["name"] == tool.name

    modified = alice_api.patch(
        url, {"description": "Sharper.", "default_requires_approval": True, "metadata_": {"k": "v"}}, format="json"
    )
    assert modified.status_code == 200
    tool.refresh_from_db()
    assert (tool.description, tool.default_requires_approval, tool.metadata) == ("Sharper.", True, {"k": "v"})

    deleted = alice_api.delete(url)
    assert deleted.status_code == 200
    assert deleted.content == b"null"
    assert not Tool.objects.filter(pk=tool.pk).exists()


def test_it_detaches_a_deleted_tool_from_every_agent(alice_api: APIClient, cast: Cast) -> None:
    attachment = AgentToolFactory(agent__organization=cast.org_a)

    alice_api.delete(f"/v1/tools/{attachment.tool.public_id}")

    assert not AgentTool.objects.exists()


def test_it_adds_the_base_tools_once(alice_api: APIClient, cast: Cast) -> None:
    first = alice_api.post("/v1/tools/add-base-tools")
    second = alice_api.post("/v1/tools/add-base-tools")

    assert first.status_code == 200
    assert first.json()
    assert sorted(t["id"] for t in first.json()) == sorted(t["id"] for t in second.json())
    assert Tool.objects.for_org(cast.org_a).count() == len(first.json())
    assert not Tool.objects.for_org(cast.org_b).exists()


@pytest.mark.parametrize(("method", "body"), [("get", None), ("patch", {"description": "x"}), ("delete", None)])
def test_it_rejects_other_org(charlie_api: APIClient, cast: Cast, method: str, body: dict[str, str] | None) -> None:
    tool = ToolFactory(organization=cast.org_a, description="untouched")

    response = getattr(charlie_api, method)(f"/v1/tools/{tool.public_id}", body, format="json")

    assert response.status_code == 404
    assert response.json() == {"detail": "Tool not found"}
    tool.refresh_from_db()
    assert tool.description == "untouched"


def test_it_upserts_into_the_callers_org_even_when_another_org_has_the_name(charlie_api: APIClient, cast: Cast) -> None:
    theirs = ToolFactory(organization=cast.org_a, name="get_secret_code_tool")

    response = charlie_api.put("/v1/tools/", {"source_code": SECRET_SOURCE}, format="json")

    assert response.status_code == 200
    assert response.json()["id"] != theirs.public_id
    assert Tool.objects.get(pk=theirs.pk).source_code == theirs.source_code


def test_it_refuses_to_change_the_source_of_a_built_in_tool_with_a_400(alice_api: APIClient, cast: Cast) -> None:
    built_in = alice_api.post("/v1/tools/add-base-tools").json()[0]
    body = {"source_code": "def x() -> str:\n    return 'x'\n", "source_type": "python", "tags": ["kept?"]}

    response = alice_api.patch(f"/v1/tools/{built_in['id']}", body, format="json")

    assert response.status_code == 400
    assert response.json() == {
        "detail": f"INVALID_ARGUMENT: Built-in tool {built_in['name']} cannot change: source_code, source_type."
    }
    assert Tool.objects.get(name=built_in["name"], organization=cast.org_a).tags == built_in["tags"]


def test_it_changes_what_a_built_in_tool_allows(alice_api: APIClient) -> None:
    built_in = alice_api.post("/v1/tools/add-base-tools").json()[0]

    response = alice_api.patch(
        f"/v1/tools/{built_in['id']}", {"tags": ["mine"], "return_char_limit": 10}, format="json"
    )

    assert response.status_code == 200
    assert (response.json()["tags"], response.json()["return_char_limit"]) == (["mine"], 10)


def test_it_answers_422_for_a_return_char_limit_too_large_to_store(alice_api: APIClient, cast: Cast) -> None:
    tool = ToolFactory(organization=cast.org_a)

    created = alice_api.post("/v1/tools/", {"source_code": SECRET_SOURCE, "return_char_limit": 2**31}, format="json")
    modified = alice_api.patch(f"/v1/tools/{tool.public_id}", {"return_char_limit": 2**63}, format="json")

    assert [created.status_code, modified.status_code] == [422, 422]
    assert modified.json()["detail"][0]["loc"] == ["body", "return_char_limit"]
    assert Tool.objects.get() == tool
