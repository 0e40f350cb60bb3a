from __future__ import annotations

import json

import pytest
from django.urls import reverse

from tests.factories import AgentToolFactory, ToolFactory
from tools.models import Tool

pytestmark = pytest.mark.django_db

SHOUT = '''def shout(text: str, times: int = 1) -> str:
    """Shout a text.

    Args:
        text: What to shout.
        times: How often.
    """
    return (text.upper() + " ") * times
'''


def preview(client, source: str):
    return client.post(
        reverse("tools:schema_preview"), data=json.dumps({"source_code": source}), content_type="application/json"
    )


def test_it_creates_a_tool_from_python_source(client, cast):
    client.force_login(cast.alice)

    response = client.post(reverse("tools:create"), {"source_code": SHOUT, "default_requires_approval": "on"})

    tool = Tool.objects.get(organization=cast.org_a, name="shout")
    assert response.status_code == 302
    assert tool.default_requires_approval is True
    assert tool.description == "Shout a text."
    assert tool.json_schema["parameters"]["required"] == ["text"]
    assert tool.json_schema["parameters"]["properties"]["times"] == {"type": "integer", "description": "How often."}


def test_it_shows_a_source_error_with_its_line_and_saves_nothing(client, cast):
    client.force_login(cast.alice)

    response = client.post(reverse("tools:create"), {"source_code": "def broken(:\n    pass\n"})

    assert response.status_code == 200
    assert response.context["form"].errors["source_code"][0].startswith("Line 1: ")
    assert not Tool.objects.exists()


def test_it_refuses_a_second_tool_with_the_same_name(client, cast):
    ToolFactory(organization=cast.org_a, name="shout")
    client.force_login(cast.alice)

    response = client.post(reverse("tools:create"), {"source_code": SHOUT})

    assert response.status_code == 200
    assert response.context["form"].errors["source_code"]
    assert Tool.objects.filter(name="shout").count() == 1


def test_it_edits_a_tool(client, cast):
    tool = ToolFactory(organization=cast.org_a, name="shout", source_code="def shout() -> str:\n    return 'a'\n")
    client.force_login(cast.alice)

    response = client.post(
        reverse("tools:edit", kwargs={"tool_id": tool.public_id}), {"source_code": SHOUT, "description": "Loud."}
    )

    tool.refresh_from_db()
    assert response.status_code == 302
    assert tool.source_code == SHOUT
    assert tool.description == "Loud."
    assert "text" in tool.json_schema["parameters"]["properties"]


def test_it_deletes_a_tool_and_detaches_it_after_confirmation(client, cast):
    attached = AgentToolFactory(agent__organization=cast.org_a)
    client.force_login(cast.alice)
    url = reverse("tools:delete", kwargs={"tool_id": attached.tool.public_id})

    confirm = client.get(url)
    response = client.post(url)

    assert attached.agent.name in confirm.content.decode()
    assert response.status_code == 302
    assert not Tool.objects.filter(pk=attached.tool.pk).exists()


@pytest.mark.parametrize("name", ["tools:edit", "tools:delete"])
def test_it_rejects_other_org(client, cast, name):
    foreign = ToolFactory(organization=cast.org_b)
    client.force_login(cast.alice)

    get = client.get(reverse(name, kwargs={"tool_id": foreign.public_id}))
    post = client.post(reverse(name, kwargs={"tool_id": foreign.public_id}), {"source_code": SHOUT})

    foreign.refresh_from_db()
    assert get.status_code == 404
    assert post.status_code == 404
    assert foreign.name != "shout"


def test_the_schema_preview_derives_the_schema_without_saving(client, cast):
    client.force_login(cast.bob)

    body = preview(client, SHOUT).json()

    assert body["ok"] is True
    assert body["schema"]["name"] == "shout"
    assert body["schema"]["parameters"]["properties"]["text"] == {"type": "string", "description": "What to shout."}
    assert not Tool.objects.exists()


def test_the_schema_preview_names_the_faulty_line(client, cast):
    client.force_login(cast.bob)

    body = preview(client, 'def shout(text: str) -> str:\n    """Shout."""\n    return text.upper(\n').json()

    assert body["ok"] is False
    assert body["line"] == 3
    assert body["error"]


def test_the_schema_preview_needs_a_logged_in_member_and_a_csrf_token(cast):
    from django.test import Client

    anonymous = Client()
    member = Client(enforce_csrf_checks=True)
    member.force_login(cast.bob)

    assert preview(anonymous, SHOUT).status_code == 302
    assert preview(member, SHOUT).status_code == 403


def test_the_schema_preview_refuses_a_body_that_is_not_source(client, cast):
    client.force_login(cast.bob)

    response = client.post(reverse("tools:schema_preview"), data="nope", content_type="application/json")
    wrong_type = preview(client, 42)

    assert response.status_code == 400
    assert wrong_type.status_code == 400
