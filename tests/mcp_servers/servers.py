"""Real MCP servers for the tests, run as their own processes: ``python servers.py KIND TRANSPORT PORT``.

``KIND`` is ``tools`` (a read-only, a destructive and a structured tool), ``stateful`` (a tool that
says which session it runs on, and ones that ask the person through elicitation), ``hang`` (a tool that
never answers), ``disconnect`` (a tool whose server dies mid-call), ``invalid`` (a tool whose
input schema is not a valid JSON schema), ``images`` (tools that return a PNG chart and an SVG drawing)
or ``oauth`` (every request answers 401 with an OAuth challenge). ``TRANSPORT`` is ``streamable_http``
(path ``/mcp``) or ``sse`` (path ``/sse``).
"""

from __future__ import annotations

import asyncio
import base64
import os
import secrets
import sys
import time
from typing import Annotated

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, Elicit, Image, MCPServer, Resolve
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp.types import ImageContent, TextContent, ToolAnnotations
from pydantic import AnyHttpUrl, BaseModel
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response


def tools_server() -> MCPServer:
    server = MCPServer("test-tools")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def lookup_weather(city: str) -> str:
        """Today's weather in a city."""
        return f"Sunny in {city}, 21 C"

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def delete_records(table: str) -> str:
        """Delete every record of a table."""
        return f"Deleted every record of {table}"

    @server.tool()
    def add_numbers(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def fail_always(reason: str) -> str:
        """Raise an error with the given reason."""
        raise ValueError(reason)

    return server


class Confirmation(BaseModel):
    confirm: bool


def ask_to_confirm(item: str) -> Elicit[Confirmation]:
    return Elicit(f"Order {item}?", Confirmation)


class DeleteConfirmation(BaseModel):
    confirm: bool
    reason: str


def ask_to_delete(path: str) -> Elicit[DeleteConfirmation]:
    return Elicit(f"Delete {path}?", DeleteConfirmation)


ASKED: dict[str, int] = {}


def ask_again(topic: str) -> Elicit[Confirmation]:
    ASKED[topic] = ASKED.get(topic, 0) + 1
    return Elicit(f"Question {ASKED[topic]} about {topic}?", Confirmation)


def stateful_server() -> MCPServer:
    server = MCPServer("test-stateful")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def which_session(ctx: Context) -> str:
        """Which client connection the call arrived on: its TCP port, the same while one client stays open
        (streamable HTTP in the 2026 protocol makes a server session per request, so that cannot tell)."""
        request = ctx.request_context.request
        return f"session {getattr(getattr(request, 'client', None), 'port', None)}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def confirm_order(item: str, answer: Annotated[Confirmation, Resolve(ask_to_confirm)]) -> str:
        """Ask the person (elicitation) to confirm an order before placing it."""
        return f"Ordered {item}" if answer.confirm else f"Did not order {item}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def confirm_delete(
        path: str, answer: Annotated[ElicitationResult[DeleteConfirmation], Resolve(ask_to_delete)]
    ) -> str:
        """Ask the person (elicitation) to confirm, with a reason, before deleting a path; says what it received."""
        if isinstance(answer, AcceptedElicitation):
            return f"accept: confirm={answer.data.confirm} reason={answer.data.reason!r} path={path}"
        return f"{answer.action}: nothing deleted at {path}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def ask_twice(topic: str, answer: Annotated[ElicitationResult[Confirmation], Resolve(ask_again)]) -> str:
        """Asks a different question on every call (elicitation)."""
        return f"{answer.action} to question {ASKED[topic]}"

    return server


def hang_server() -> MCPServer:
    server = MCPServer("test-hang")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def wait_forever(note: str) -> str:
        """Never answers."""
        await asyncio.sleep(3600)
        return note

    return server


def disconnect_server() -> MCPServer:
    server = MCPServer("test-disconnect")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def crash(note: str) -> str:
        """The server process dies while answering."""
        await asyncio.sleep(0.2)
        os._exit(3)

    return server


def invalid_server() -> MCPServer:
    server = MCPServer("test-invalid")

    @server.tool()
    def broken(value: str) -> str:
        """A tool whose schema does not validate."""
        return value

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def fine(value: str) -> str:
        """A tool whose schema is fine."""
        return value

    server._tool_manager._tools["broken"].parameters = {
        "type": "object",
        "properties": {"value": {"type": "no-such-type"}},
    }
    return server


class TestAuthorizationServer:
    """A small OAuth 2.1 authorization server in memory: dynamic registration, a consent page, PKCE, refresh.

    Access tokens live ``token_seconds``; every token issued is logged in ``issued`` (the tests
    ask ``/stats`` how many refreshes happened).
    """

    def __init__(self, token_seconds: int) -> None:
        self.token_seconds = token_seconds
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.pending: dict[str, tuple[str, AuthorizationParams]] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.stats = {"registrations": 0, "codes": 0, "refreshes": 0}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        self.stats["registrations"] += 1

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        transaction = secrets.token_urlsafe(16)
        self.pending[transaction] = (str(client.client_id), params)
        return f"/consent?transaction={transaction}"

    def approve(self, transaction: str) -> str:
        client_id, params = self.pending.pop(transaction)
        code = AuthorizationCode(
            code=secrets.token_urlsafe(24),
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        self.codes[code.code] = code
        self.stats["codes"] += 1
        return construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(str(client.client_id), authorization_code.scopes)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]
        self.stats["refreshes"] += 1
        return self._issue(str(client.client_id), scopes or refresh_token.scopes)

    async def load_access_token(self, token: str) -> AccessToken | None:
        access = self.access.get(token)
        if access is None or (access.expires_at is not None and access.expires_at < time.time()):
            return None
        return access

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str]) -> OAuthToken:
        access = AccessToken(
            token=f"at-{secrets.token_urlsafe(16)}",
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + self.token_seconds,
        )
        refresh = RefreshToken(token=f"rt-{secrets.token_urlsafe(16)}", client_id=client_id, scopes=scopes)
        self.access[access.token] = access
        self.refresh[refresh.token] = refresh
        return OAuthToken(
            access_token=access.token,
            expires_in=self.token_seconds,
            scope=" ".join(scopes) or None,
            refresh_token=refresh.token,
        )


CONSENT_PAGE = """<!doctype html><html lang="en"><head><title>Authorize</title></head><body>
<h1>Authorize the agent server</h1><p>It asks to use the tools of test-oauth.</p>
<form method="post" action="/consent"><input type="hidden" name="transaction" value="{transaction}">
<button type="submit">Approve</button></form></body></html>"""


def oauth_server(port: int, token_seconds: int) -> MCPServer:
    """The tools server behind OAuth: the ``mcp`` SDK's own resource server and authorization routes."""
    base = f"http://127.0.0.1:{port}"
    provider = TestAuthorizationServer(token_seconds)
    server = MCPServer(
        "test-oauth",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(base),
            resource_server_url=AnyHttpUrl(f"{base}/mcp"),
            client_registration_options=ClientRegistrationOptions(enabled=True),
        ),
    )

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def private_notes(topic: str) -> str:
        """Read the signed-in user's notes on a topic."""
        return f"Private notes on {topic}"

    @server.custom_route("/consent", methods=["GET", "POST"])
    async def consent(request: Request) -> Response:
        if request.method == "GET":
            return HTMLResponse(CONSENT_PAGE.format(transaction=request.query_params["transaction"]))
        form = await request.form()
        return RedirectResponse(provider.approve(str(form["transaction"])), status_code=302)

    @server.custom_route("/stats", methods=["GET"])
    async def stats(request: Request) -> Response:
        return JSONResponse(provider.stats)

    return server


#: A 1x1 PNG.
TINY_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
SVG_DRAWING = b'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><rect width="1" height="1"/></svg>'


def images_server() -> MCPServer:
    server = MCPServer("test-images")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def render_chart(title: str) -> list[TextContent | ImageContent]:
        """A chart, as a PNG image with its caption."""
        return [TextContent(type="text", text=f"Chart: {title}"), Image(data=TINY_PNG, format="png").to_image_content()]

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def draw_vector(shape: str) -> list[TextContent | ImageContent]:
        """A drawing, as an SVG image."""
        data = base64.b64encode(SVG_DRAWING).decode()
        return [TextContent(type="text", text=f"Drawing: {shape}"), ImageContent(data=data, mime_type="image/svg+xml")]

    return server


OAUTH_TOKEN_SECONDS = {"oauth": 3600, "oauth-expiring": 2}
SERVERS = {
    "tools": tools_server,
    "stateful": stateful_server,
    "hang": hang_server,
    "disconnect": disconnect_server,
    "invalid": invalid_server,
    "images": images_server,
}


def main(kind: str, transport: str, port: int) -> None:
    server = oauth_server(port, OAUTH_TOKEN_SECONDS[kind]) if kind in OAUTH_TOKEN_SECONDS else SERVERS[kind]()
    app = server.sse_app() if transport == "sse" else server.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
