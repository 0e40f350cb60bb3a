"""``GET /v1/tags/``: the organization's agent and block tags, as Letta lists them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from letta_client import Letta

from agents import services
from agents.models import Block

if TYPE_CHECKING:
    from rest_framework.test import APIClient

    from tests.conftest import Cast
    from tests.support.live_server import LiveServer


@pytest.fixture
def tagged(cast: Cast) -> None:
    services.agent_create(organization=cast.org_a, name="a", model="demo/echo-1", tags=["team:red", "prod"])
    services.agent_create(organization=cast.org_a, name="b", model="demo/echo-1", tags=["prod", "Beta"])
    Block.objects.create(organization=cast.org_a, label="notes", value="", tags=["kb", "prod"])
    services.agent_create(organization=cast.org_b, name="c", model="demo/echo-1", tags=["globex-secret"])


@pytest.mark.django_db
@pytest.mark.usefixtures("tagged")
def test_it_lists_agent_and_block_tags_sorted_and_once(alice_api: APIClient) -> None:
    assert alice_api.get("/v1/tags/").json() == ["Beta", "kb", "prod", "team:red"]
    assert alice_api.get("/v1/tags").json() == ["Beta", "kb", "prod", "team:red"]


@pytest.mark.django_db
@pytest.mark.usefixtures("tagged")
def test_it_filters_by_name_and_pages_by_tag(alice_api: APIClient) -> None:
    assert alice_api.get("/v1/tags/?name=RE").json() == ["team:red"]
    assert alice_api.get("/v1/tags/?query_text=b").json() == ["Beta", "kb"]
    assert alice_api.get("/v1/tags/?after=kb&limit=1").json() == ["prod"]
    assert alice_api.get("/v1/tags/?order=desc&before=prod").json() == ["team:red"]


@pytest.mark.django_db
@pytest.mark.usefixtures("tagged")
def test_another_organizations_tags_are_never_listed(charlie_api: APIClient) -> None:
    assert charlie_api.get("/v1/tags/").json() == ["globex-secret"]
    assert charlie_api.get("/v1/tags/?name=prod").json() == []


@pytest.mark.live_server
@pytest.mark.sdk
def test_letta_client_lists_tags(letta_server: LiveServer) -> None:
    client = Letta(base_url=letta_server.url, token=letta_server.api_key)
    agent = client.agents.create(name="tagged-sdk", model="demo/echo-1", tags=["sdk-tag-zz"])

    assert "sdk-tag-zz" in client.tags.list(name="sdk-tag")
    client.agents.delete(agent_id=agent.id)
