"""One ``pending_approval`` (``agents.selectors.pending_approval_rows``) for the chat, the inbox and the API.

An agent awaits approval while its latest row asks for one and no run of it is active: the run
an answer started is already taking care of the request, so no page offers to answer it again.
"""

from __future__ import annotations

import pytest

from agents import services
from agents.approvals.inbox import pending_approvals
from agents.chat import actions as chat
from agents.models import Agent, RunStatus
from tests.conftest import Cast
from tests.factories import RunFactory, asking_for_approval
from tests.support.api import api_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def waiting(cast: Cast) -> Agent:
    """An agent whose last row asks a person to approve ``call_1``."""
    agent = services.agent_create(organization=cast.org_a, name="Waiting", model="demo/echo-1")
    asking_for_approval(agent, "call_1", said="Calling get_secret_code.", arguments="{}")
    return agent


def everyones_view(cast: Cast, agent: Agent) -> tuple[object, object, object, list[object]]:
    """The pending approval as the chat's history page, its resync, the API and the inbox give it."""
    api = api_client(cast.org_a, cast.alice)
    state = api.get(f"/v1/agents/{agent.public_id}", {"include": "agent.pending_approval"}).json()
    inbox = [pending.request for pending in pending_approvals(cast.org_a)]
    history = chat.chat_history(agent=agent)["pending_approval"]
    return history, chat.chat_sync(agent=agent, after_seq=-1)["pending_approval"], state["pending_approval"], inbox


def test_the_chat_the_inbox_and_the_api_give_the_same_waiting_request(cast: Cast, waiting: Agent) -> None:
    history, sync, api, inbox = everyones_view(cast, waiting)

    assert history is not None
    assert history["message_type"] == "approval_request_message"
    assert history == sync == api
    assert inbox == [history]


def test_nobody_offers_a_request_whose_answer_is_running(cast: Cast, waiting: Agent) -> None:
    RunFactory(agent=waiting, status=RunStatus.RUNNING)

    history, sync, api, inbox = everyones_view(cast, waiting)

    assert (history, sync, api, inbox) == (None, None, None, [])
    assert chat.chat_sync(agent=waiting, after_seq=-1)["run"]["active"] is True
