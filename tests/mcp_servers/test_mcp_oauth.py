"""OAuth 2.1 with a real OAuth-protected MCP server (the ``mcp`` SDK's resource server and a small authorization
server in ``servers.py``): the connect stream, the callback, tokens encrypted per organization and person,
refreshed when they expire, and out of reach of another organization.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from django.db import connection

from agents import services
from mcp_servers import oauth
from mcp_servers.models import MCPOAuthSession, MCPServer, OAuthStatus
from tests.mcp_servers.conftest import add_server
from tests.mcp_servers.streams import events
from tools.models import Tool

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.test import Client
    from pytest_django.fixtures import SettingsWrapper
    from rest_framework.test import APIClient

    from tests.conftest import Cast
    from tests.mcp_servers.conftest import RunningServer

pytestmark = pytest.mark.django_db


def approve(authorization_url: str) -> str:
    """What a person does at the authorization server: open the page, press Approve. The redirect back to us."""
    with httpx2.Client(follow_redirects=False, timeout=10) as http:
        to_consent = http.get(authorization_url)
        assert to_consent.status_code == 302, to_consent.text
        consent_url = httpx2.URL(authorization_url).join(to_consent.headers["location"])
        page = http.get(consent_url)
        assert "Approve" in page.text
        transaction = parse_qs(consent_url.query.decode())["transaction"][0]
        back = http.post(consent_url.copy_with(query=None), data={"transaction": transaction})
    assert back.status_code == 302
    return str(back.headers["location"])


def connect(api: APIClient, server: MCPServer) -> list[dict[str, Any]]:
    """The connect stream (which gives up at once: ``MCP_OAUTH_WAIT_SECONDS`` is 0), then the person approves."""
    streamed = events(api.get(f"/v1/mcp-servers/connect/{server.public_id}"))
    [url_event] = [event for event in streamed if event["event"] == "authorization_url"]
    callback = urlsplit(approve(url_event["url"]))
    answer = api.get(f"{callback.path}?{callback.query}")
    assert answer.status_code == 200
    assert answer.json() == {
        "status": "success",
        "message": "Authorization successful",
        "server_url": server.server_url,
    }
    return streamed


def stats(server: RunningServer) -> dict[str, int]:
    return httpx2.get(server.url.replace("/mcp", "/stats"), timeout=5).json()


@pytest.fixture(autouse=True)
def _no_wait(settings: SettingsWrapper) -> None:
    settings.MCP_OAUTH_WAIT_SECONDS = 0


def test_connecting_over_the_api_runs_letta_s_oauth_sequence_and_the_tools_then_work(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer]
) -> None:
    running = mcp_server("oauth")
    server = add_server(cast.org_a, running.url)
    assert "requires authorization (HTTP 401)" in server.last_error
    registrations = stats(running)["registrations"]

    streamed = connect(alice_api, server)

    assert [event["event"] for event in streamed] == [
        "connection_attempt",
        "oauth_required",
        "authorization_url",
        "waiting_for_auth",
        "error",
    ]
    url_event = streamed[2]
    assert url_event["session_id"].startswith("mcp-oauth-")
    query = parse_qs(urlsplit(url_event["url"]).query)
    assert query["code_challenge_method"] == ["S256"]
    assert query["redirect_uri"] == ["http://testserver/v1/tools/mcp/oauth/callback"]
    assert query["resource"] == [running.url]
    assert "not completed within 0 s" in streamed[4]["message"]
    assert stats(running)["registrations"] == registrations + 1
    tool = Tool.objects.get(organization=cast.org_a, name="private_notes")
    run = alice_api.post(
        f"/v1/mcp-servers/{server.public_id}/tools/{tool.public_id}/run", {"args": {"topic": "x"}}, format="json"
    )
    assert run.json()["func_return"] == "Private notes on x"
    live = alice_api.get("/v1/tools/mcp/servers/notes/tools")
    assert [item["name"] for item in live.json()] == ["private_notes"]


def test_the_tokens_are_encrypted_at_rest_and_never_in_an_answer(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer]
) -> None:
    server = add_server(cast.org_a, mcp_server("oauth").url)
    connect(alice_api, server)
    session = MCPOAuthSession.objects.get(server=server, status=OAuthStatus.AUTHORIZED)
    access, refresh = session.secret("access_token"), session.secret("refresh_token")

    with connection.cursor() as cursor:
        cursor.execute("SELECT secrets::text FROM mcp_servers_mcpoauthsession")
        raw = str(cursor.fetchall())
    answers = [
        alice_api.get("/v1/mcp-servers/").content,
        alice_api.get(f"/v1/mcp-servers/{server.public_id}").content,
        alice_api.get("/v1/tools/mcp/servers").content,
    ]
    assert access.startswith("at-") and refresh.startswith("rt-")
    assert access not in raw and refresh not in raw and "fernet" in raw
    assert all(access.encode() not in answer and refresh.encode() not in answer for answer in answers)


def test_an_agent_calls_the_oauth_tool_and_an_expired_token_is_refreshed_first(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer], settings: SettingsWrapper
) -> None:
    settings.MCP_OAUTH_REFRESH_MARGIN = 0
    running = mcp_server("oauth-expiring")
    server = add_server(cast.org_a, running.url)
    connect(alice_api, server)
    tool = Tool.objects.get(organization=cast.org_a, name="private_notes")
    agent = services.agent_create(organization=cast.org_a, name="notes", model="demo/echo-1", tool_ids=[tool.public_id])
    first = MCPOAuthSession.objects.get(server=server, status=OAuthStatus.AUTHORIZED).secret("access_token")
    refreshes = stats(running)["refreshes"]

    time.sleep(2.5)  # the access token lives two seconds
    body = {"messages": [{"role": "user", "content": "call private_notes with topic=plans"}]}
    reply = alice_api.post(f"/v1/agents/{agent.public_id}/messages", body, format="json").json()

    [result] = [message for message in reply["messages"] if message["message_type"] == "tool_return_message"]
    assert (result["status"], result["tool_return"]) == ("success", "Private notes on plans")
    assert stats(running)["refreshes"] == refreshes + 1
    session = MCPOAuthSession.objects.get(server=server, status=OAuthStatus.AUTHORIZED)
    assert session.secret("access_token") != first
    assert session.expires_at is not None


def test_another_organization_cannot_use_the_tokens_or_finish_the_authorization(
    alice_api: APIClient,
    charlie_api: APIClient,
    client: Client,
    cast: Cast,
    mcp_server: Callable[..., RunningServer],
) -> None:
    url = mcp_server("oauth").url
    alices = add_server(cast.org_a, url)
    connect(alice_api, alices)
    charlies = add_server(cast.org_b, url)
    pending, _url = oauth.oauth_begin(
        server=alices, user=cast.alice, redirect_uri="http://testserver/mcp-servers/oauth/callback/"
    )

    assert oauth.oauth_bearer(server=charlies) == ""
    refused = charlie_api.get("/v1/tools/mcp/servers/notes/tools")
    assert refused.status_code == 502
    assert "connect it with OAuth in the browser" in refused.json()["detail"]
    assert not Tool.objects.filter(organization=cast.org_b, name="private_notes").exists()
    client.force_login(cast.charlie)
    page = client.get(f"/mcp-servers/oauth/callback/?state={pending.state}&code=stolen", follow=True)
    assert "unknown or has expired" in page.content.decode()
    pending.refresh_from_db()
    assert pending.status == OAuthStatus.PENDING


def test_the_callback_answers_letta_s_errors(
    alice_api: APIClient, cast: Cast, mcp_server: Callable[..., RunningServer]
) -> None:
    server = add_server(cast.org_a, mcp_server("oauth").url)
    session, _url = oauth.oauth_begin(server=server, user=cast.alice, redirect_uri="http://testserver/cb")

    def message(query: str) -> Any:
        return alice_api.get(f"/v1/tools/mcp/oauth/callback{query}").json()

    assert message("") == {"status": "error", "message": "Missing state parameter"}
    assert message("?state=nope&code=x") == {"status": "error", "message": "Invalid or expired state parameter"}
    assert message(f"?state={session.state}") == {"status": "error", "message": "Missing authorization code"}
    assert message(f"?state={session.state}&error=access_denied&error_description=no") == {
        "status": "error",
        "message": "OAuth error: access_denied - no",
    }
    session.refresh_from_db()
    assert session.status == OAuthStatus.FAILED
