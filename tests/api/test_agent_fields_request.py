"""Request-time fields (LETTA_CONVERSATIONS §4.2): ``include_return_message_types`` and ``client_skills``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient

from agents import services
from agents.memory.prompt import Skill, available_skills
from agents.models import Agent, Message
from tests.fake_llm.script import Reply

pytestmark = pytest.mark.django_db

SKILLS = [
    {
        "name": "acquiring-skills",
        "description": "Discover and install skills from Hermes, ClawHub, …\nSecond line, not shown.",
        "location": "/abs/app/skills/acquiring-skills/SKILL.md",
    },
    {
        "name": "browser-use",
        "description": "Control a real browser to navigate pages, …",
        "location": "/abs/app/skills/browser-use/SKILL.md",
    },
]
LETTAS_BLOCK = """<available_skills>
/abs/app/skills
├── acquiring-skills/
│   └── SKILL.md (Discover and install skills from Hermes, ClawHub, …)
└── browser-use/
    └── SKILL.md (Control a real browser to navigate pages, …)
</available_skills>"""


@pytest.fixture
def claude(cast, settings, fake_llm) -> Agent:
    settings.ANTHROPIC_BASE_URL = fake_llm.url
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    return services.agent_create(organization=cast.org_a, name="claude", model="anthropic/claude-sonnet-4-6")


def send(api: APIClient, agent: Agent, **extra: Any) -> Any:
    return api.post(
        f"/v1/agents/{agent.public_id}/messages",
        {"messages": [{"role": "user", "content": "hi"}], **extra},
        format="json",
    )


def sse(response: Any) -> list[dict[str, Any]]:
    body = b"".join(response).decode()
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: {")]


def test_skills_render_as_lettas_tree():
    skills = [Skill(**item) for item in SKILLS]
    assert available_skills(skills) == LETTAS_BLOCK
    assert available_skills([*skills, Skill("browser-use", "again", "/elsewhere/x.md")]) == LETTAS_BLOCK
    assert available_skills([]) == ""


def test_skills_outside_a_folder_of_their_name_group_under_their_directory():
    block = available_skills(
        [Skill("b", "", "/z/notes/b.md"), Skill("a", "First", "/z/notes/a.md"), Skill("c", "", "/y/c/SKILL.md")]
    )
    assert block == (
        "<available_skills>\n/y\n└── c/\n    └── SKILL.md\n\n/z/notes\n├── a.md (First)\n└── b.md\n</available_skills>"
    )


def test_client_skills_join_the_system_prompt_of_that_request_only(alice_api, claude, fake_llm):
    fake_llm.script(Reply(text="Hi."), Reply(text="Hi again."))

    assert send(alice_api, claude, client_skills=SKILLS).status_code == 200
    system = json.dumps(fake_llm.requests[-1].body["system"], ensure_ascii=False)
    assert json.dumps(LETTAS_BLOCK, ensure_ascii=False)[1:-1] in system
    assert "<available_skills>" not in json.dumps([m.content for m in Message.objects.filter(agent=claude)])

    assert send(alice_api, claude).status_code == 200
    assert "<available_skills>" not in json.dumps(fake_llm.requests[-1].body["system"])


def test_a_skill_without_a_location_is_a_422(alice_api, claude):
    response = send(alice_api, claude, client_skills=[{"name": "x", "description": "y"}])
    assert response.status_code == 422


def test_include_return_message_types_filters_a_blocking_answer(alice_api, claude, fake_llm):
    fake_llm.script(Reply(text="Hi.", reasoning="thinking"))

    response = send(alice_api, claude, include_return_message_types=["assistant_message"])

    assert response.status_code == 200, response.content
    body = response.json()
    assert [m["message_type"] for m in body["messages"]] == ["assistant_message"]
    assert body["stop_reason"]["stop_reason"] == "end_turn"


@pytest.mark.parametrize("stream_tokens", [False, True])
def test_include_return_message_types_filters_a_stream_but_not_its_end(alice_api, claude, fake_llm, stream_tokens):
    fake_llm.script(Reply(text="Hi there.", reasoning="thinking"))

    response = alice_api.post(
        f"/v1/agents/{claude.public_id}/messages/stream",
        {
            "messages": [{"role": "user", "content": "hi"}],
            "include_return_message_types": ["reasoning_message"],
            "stream_tokens": stream_tokens,
        },
        format="json",
    )

    types = {chunk["message_type"] for chunk in sse(response)}
    assert types == {"reasoning_message", "stop_reason", "usage_statistics"}


def test_an_unknown_message_type_is_a_422(alice_api, claude):
    response = send(alice_api, claude, include_return_message_types=["assistant_message", "bogus"])
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "include_return_message_types", 1]


def test_include_return_message_types_filters_the_listing(alice_api, claude, fake_llm):
    fake_llm.script(Reply(text="Hi.", reasoning="thinking"))
    assert send(alice_api, claude).status_code == 200
    url = f"/v1/agents/{claude.public_id}/messages"

    listed = alice_api.get(url, {"include_return_message_types": ["user_message", "assistant_message"]}).json()

    assert {m["message_type"] for m in listed} == {"user_message", "assistant_message"}
    assert alice_api.get(url, {"include_return_message_types": "nope"}).status_code == 422
