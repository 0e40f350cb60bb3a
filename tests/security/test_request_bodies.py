"""Issue 14, item 5: an oversized request body is a Letta-shaped 413, never a 500."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.factories import AgentFactory
from tests.support.api import api_client

if TYPE_CHECKING:
    from tests.conftest import Cast


def _messages_body(size: int) -> str:
    return json.dumps({"messages": [{"role": "user", "content": "x" * size}]})


def test_a_five_megabyte_message_post_answers_413_with_a_detail(cast: Cast):
    agent = AgentFactory(organization=cast.org_a)
    client = api_client(cast.org_a, cast.alice)
    response = client.post(
        f"/v1/agents/{agent.public_id}/messages", _messages_body(5 * 1024 * 1024), content_type="application/json"
    )
    assert response.status_code == 413
    assert response.json() == {"detail": "Request body too large: the limit is 1048576 bytes"}


def test_the_body_limit_defaults_to_one_mebibyte_and_is_configurable(cast: Cast, settings):
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == 1024 * 1024
    agent = AgentFactory(organization=cast.org_a)
    client = api_client(cast.org_a, cast.alice)
    over_default = _messages_body(1024 * 1024 + 1)
    url = f"/v1/agents/{agent.public_id}/messages"
    assert client.post(url, over_default, content_type="application/json").status_code == 413
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4 * 1024 * 1024
    # Past the body limit now, a message that long meets the per-message limit (shared with the chat).
    response = client.post(url, over_default, content_type="application/json")
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][:4] == ["body", "messages", 0, "content"]
    many = json.dumps({"messages": [{"role": "user", "content": "x" * 11_000} for _ in range(100)]})
    assert len(many) > 1024 * 1024
    assert client.post(url, many, content_type="application/json").status_code == 200
