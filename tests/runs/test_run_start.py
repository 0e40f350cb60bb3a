"""``agents.runs.start.run_start``: one busy rule, the same answer on every transport (DESIGN §14)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from agents import services
from agents.errors import AgentBusy
from agents.models import Run, RunStatus
from tests.factories import RunFactory
from tests.support.api import api_client

USER_MESSAGE = {"messages": [{"role": "user", "content": "Are you there?"}]}
BUSY = AgentBusy.default_detail


@pytest.fixture
def busy_agent(cast):
    """An agent whose run is still running (alive: its heartbeat is fresh)."""
    agent = services.agent_create(organization=cast.org_a, name="Busy", model="demo/echo-1")
    RunFactory(agent=agent, status=RunStatus.RUNNING, started_at=timezone.now(), heartbeat_at=timezone.now())
    return agent


@pytest.mark.parametrize(
    ("path", "extra"),
    [
        ("messages", {}),
        ("messages/stream", {}),
        ("messages/stream", {"stream_tokens": True}),
        ("messages/stream", {"background": True}),
        ("messages/async", {}),
    ],
)
@pytest.mark.django_db
def test_every_rest_transport_refuses_a_message_to_a_busy_agent_with_one_409(cast, busy_agent, path, extra):
    api = api_client(cast.org_a, cast.alice)

    response = api.post(f"/v1/agents/{busy_agent.public_id}/{path}", USER_MESSAGE | extra, format="json")

    assert response.status_code == 409
    assert response.json() == {"detail": BUSY}
    assert response["x-should-retry"] == "false"
    assert Run.objects.filter(agent=busy_agent).count() == 1


@pytest.mark.django_db
def test_a_queued_run_makes_the_agent_busy_too(cast):
    agent = services.agent_create(organization=cast.org_a, name="Queued", model="demo/echo-1")
    RunFactory(agent=agent)
    api = api_client(cast.org_a, cast.alice)

    response = api.post(f"/v1/agents/{agent.public_id}/messages/async", USER_MESSAGE, format="json")

    assert (response.status_code, response.json()) == (409, {"detail": BUSY})


@pytest.mark.django_db
def test_a_run_whose_worker_died_does_not_keep_the_agent_busy(cast):
    agent = services.agent_create(organization=cast.org_a, name="Stale", model="demo/echo-1")
    long_ago = timezone.now() - timezone.timedelta(hours=1)
    dead = RunFactory(agent=agent, status=RunStatus.RUNNING, started_at=long_ago, heartbeat_at=long_ago)
    api = api_client(cast.org_a, cast.alice)

    response = api.post(f"/v1/agents/{agent.public_id}/messages", USER_MESSAGE, format="json")

    assert response.status_code == 200
    dead.refresh_from_db()
    assert dead.status == RunStatus.FAILED


@pytest.mark.django_db
def test_a_cancel_is_accepted_even_with_nothing_to_cancel(cast):
    agent = services.agent_create(organization=cast.org_a, name="Idle", model="demo/echo-1")
    api = api_client(cast.org_a, cast.alice)

    response = api.post(f"/v1/agents/{agent.public_id}/messages/cancel", {}, format="json")

    assert (response.status_code, response.json()) == (200, {})


@pytest.mark.django_db
def test_a_blocking_send_to_another_organizations_agent_is_a_404_and_starts_no_run(cast):
    agent = services.agent_create(organization=cast.org_b, name="Theirs", model="demo/echo-1")
    api = api_client(cast.org_a, cast.alice)

    response = api.post(f"/v1/agents/{agent.public_id}/messages", USER_MESSAGE, format="json")

    assert response.status_code == 404
    assert response.json()["detail"] == "Agent not found"
    assert not Run.objects.filter(agent=agent).exists()


@pytest.mark.django_db
def test_a_blocking_send_to_an_unknown_agent_is_a_404_even_when_its_body_does_not_parse(cast):
    api = api_client(cast.org_a, cast.alice)

    response = api.post("/v1/agents/agent-00000000-0000-0000-0000-000000000000/messages", {"x": 1}, format="json")

    assert response.status_code == 404
