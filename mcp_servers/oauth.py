"""OAuth 2.1 for MCP servers: authorization code with PKCE, dynamic client registration, refresh.

The flow is the protocol's (the ``mcp`` SDK's discovery helpers do the reading):

1. ``oauth_begin``: an unauthenticated request to the server answers 401; its protected
   resource metadata names the authorization server, whose metadata gives the endpoints. The
   client is registered dynamically (where the server offers it), a PKCE verifier and a
   ``state`` are made, and a pending ``MCPOAuthSession`` keeps them. The person is sent to the
   authorization URL.
2. ``oauth_complete``: the authorization server sends the person back with ``code`` and
   ``state``; the code is exchanged (with the verifier) for tokens, stored encrypted.
3. ``oauth_bearer``: before each connection, the access token of the organization's session
   for the server, refreshed first when it expires within ``MCP_OAUTH_REFRESH_MARGIN`` seconds.

A session belongs to one organization and one person. Every URL met on the way passes the
egress guard. Messages never hold a token, a verifier or a client secret.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import anyio
import httpx2
from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from mcp.client.auth.oauth2 import PKCEParameters
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    extract_resource_metadata_from_www_auth,
    extract_scope_from_www_auth,
    get_client_metadata_scopes,
    handle_auth_metadata_response,
    handle_protected_resource_response,
)
from mcp.shared.auth import OAuthClientMetadata, OAuthMetadata, OAuthToken, ProtectedResourceMetadata
from pydantic import AnyUrl, ValidationError

from mcp_servers.egress import check_mcp_url
from mcp_servers.errors import MCPOAuthFailed
from mcp_servers.models import MCPOAuthSession, MCPServer, OAuthStatus

if TYPE_CHECKING:
    from accounts.models import User

CLIENT_NAME = "Letta Django agent server"
GRANT_TYPES = ["authorization_code", "refresh_token"]


@dataclass(frozen=True)
class AuthorizationServer:
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str
    resource: str
    scope: str
    auth_methods: tuple[str, ...]


def _http() -> httpx2.AsyncClient:
    return httpx2.AsyncClient(timeout=float(settings.MCP_CONNECT_TIMEOUT), follow_redirects=False)


async def _checked(url: str) -> str:
    try:
        await anyio.to_thread.run_sync(check_mcp_url, url)
    except Exception as exc:
        raise MCPOAuthFailed(f"The OAuth address {url} is not allowed: {exc}") from exc
    return url


async def discover(server_url: str) -> AuthorizationServer:
    """Where to authorize for ``server_url``: its protected resource metadata, then its authorization server's."""
    async with _http() as http:
        try:
            challenge = await http.post(await _checked(server_url), json={}, headers={"Accept": "application/json"})
            prm: ProtectedResourceMetadata | None = None
            for url in build_protected_resource_metadata_discovery_urls(
                extract_resource_metadata_from_www_auth(challenge), server_url
            ):
                prm = await handle_protected_resource_response(await http.get(await _checked(url)))
                if prm is not None:
                    break
            issuer = str(prm.authorization_servers[0]) if prm is not None and prm.authorization_servers else None
            asm: OAuthMetadata | None = None
            for url in build_oauth_authorization_server_metadata_discovery_urls(issuer, server_url):
                ok, asm = await handle_auth_metadata_response(await http.get(await _checked(url)))
                if not ok or asm is not None:
                    break
        except httpx2.HTTPError as exc:
            raise MCPOAuthFailed(f"Could not read the OAuth metadata of {server_url} ({type(exc).__name__}).") from exc
    if asm is None:
        raise MCPOAuthFailed(f"The MCP server at {server_url} does not publish OAuth authorization server metadata.")
    if asm.code_challenge_methods_supported and "S256" not in asm.code_challenge_methods_supported:
        raise MCPOAuthFailed("The authorization server does not offer PKCE with S256.")
    scope = get_client_metadata_scopes(extract_scope_from_www_auth(challenge), prm, asm, GRANT_TYPES) or ""
    return AuthorizationServer(
        authorization_endpoint=str(asm.authorization_endpoint),
        token_endpoint=str(asm.token_endpoint),
        registration_endpoint=str(asm.registration_endpoint or ""),
        resource=str(prm.resource) if prm is not None and prm.resource else server_url,
        scope=scope,
        auth_methods=tuple(asm.token_endpoint_auth_methods_supported or ["client_secret_post"]),
    )


async def register(server: AuthorizationServer, redirect_uri: str) -> tuple[str, str]:
    """Dynamic client registration (RFC 7591): ``(client_id, client_secret)`` (the secret may be empty)."""
    if not server.registration_endpoint:
        raise MCPOAuthFailed(
            "The authorization server offers no dynamic client registration, which this server needs to connect."
        )
    method = "none" if "none" in server.auth_methods else "client_secret_post"
    metadata = OAuthClientMetadata(
        redirect_uris=[AnyUrl(redirect_uri)],
        client_name=CLIENT_NAME,
        grant_types=GRANT_TYPES,
        response_types=["code"],
        token_endpoint_auth_method=method,  # type: ignore[arg-type]
        scope=server.scope or None,
    )
    async with _http() as http:
        try:
            response = await http.post(
                await _checked(server.registration_endpoint),
                json=metadata.model_dump(by_alias=True, mode="json", exclude_none=True),
            )
        except httpx2.HTTPError as exc:
            raise MCPOAuthFailed(f"The client registration failed ({type(exc).__name__}).") from exc
    if response.status_code not in (200, 201):
        raise MCPOAuthFailed(f"The authorization server refused the client registration (HTTP {response.status_code}).")
    body = response.json()
    return str(body["client_id"]), str(body.get("client_secret") or "")


async def request_tokens(token_endpoint: str, form: dict[str, str]) -> OAuthToken:
    async with _http() as http:
        try:
            response = await http.post(await _checked(token_endpoint), data=form)
        except httpx2.HTTPError as exc:
            raise MCPOAuthFailed(f"The token request failed ({type(exc).__name__}).") from exc
    if response.status_code != 200:
        error = ""
        with contextlib.suppress(ValueError):
            error = str(response.json().get("error") or "")
        raise MCPOAuthFailed(
            f"The authorization server refused the token request (HTTP {response.status_code} {error})."
        )
    try:
        return OAuthToken.model_validate_json(response.content)
    except ValidationError as exc:
        raise MCPOAuthFailed("The authorization server answered a token that is not valid OAuth.") from exc


# --- sessions (the database side) -----------------------------------------------------------------


def oauth_begin(*, server: MCPServer, user: User | None, redirect_uri: str) -> tuple[MCPOAuthSession, str]:
    """A pending session for ``user`` and the URL of the authorization page to send them to."""
    found = async_to_sync(discover)(server.server_url)
    previous = (
        MCPOAuthSession.objects.for_org(server.organization_id)
        .filter(server=server, redirect_uri=redirect_uri, token_endpoint=found.token_endpoint)
        .exclude(client_id="")
        .first()
    )
    if previous is not None:
        client_id, client_secret = previous.client_id, previous.secret("client_secret")
    else:
        client_id, client_secret = async_to_sync(register)(found, redirect_uri)
    pkce = PKCEParameters.generate()
    session = MCPOAuthSession.objects.create(
        organization_id=server.organization_id,
        server=server,
        created_by=user,
        state=secrets.token_urlsafe(32),
        redirect_uri=redirect_uri,
        authorization_endpoint=found.authorization_endpoint,
        token_endpoint=found.token_endpoint,
        resource=found.resource,
        client_id=client_id,
        scope=found.scope,
        secrets={"code_verifier": pkce.code_verifier, "client_secret": client_secret},
    )
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": session.state,
        "code_challenge": pkce.code_challenge,
        "code_challenge_method": "S256",
        "resource": found.resource,
        **({"scope": found.scope} if found.scope else {}),
    }
    separator = "&" if "?" in found.authorization_endpoint else "?"
    return session, f"{found.authorization_endpoint}{separator}{urlencode(params)}"


def pending_session(state: str) -> MCPOAuthSession | None:
    """The pending session ``state`` names (the state is the only key a callback has)."""
    if not state:
        return None
    return MCPOAuthSession.objects.select_related("server").filter(state=state, status=OAuthStatus.PENDING).first()


def oauth_complete(*, session: MCPOAuthSession, code: str) -> MCPOAuthSession:
    """Exchange the authorization code for tokens; the person's older sessions for the server are dropped."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": session.redirect_uri,
        "client_id": session.client_id,
        "code_verifier": session.secret("code_verifier"),
        "resource": session.resource,
    }
    try:
        tokens = async_to_sync(request_tokens)(session.token_endpoint, _with_secret(session, form))
    except MCPOAuthFailed as exc:
        oauth_fail(session=session, error=str(exc.detail))
        raise
    with transaction.atomic():
        _store(session, tokens)
        MCPOAuthSession.objects.for_org(session.organization_id).filter(
            server_id=session.server_id, created_by_id=session.created_by_id
        ).exclude(pk=session.pk).delete()
    return session


def oauth_fail(*, session: MCPOAuthSession, error: str) -> None:
    session.status = OAuthStatus.FAILED
    session.error = error
    session.save(update_fields=["status", "error", "updated_at"])


def _with_secret(session: MCPOAuthSession, form: dict[str, str]) -> dict[str, str]:
    client_secret = session.secret("client_secret")
    return {**form, "client_secret": client_secret} if client_secret else form


def _store(session: MCPOAuthSession, tokens: OAuthToken) -> None:
    kept = dict(session.secrets or {})
    kept.pop("code_verifier", None)
    kept["access_token"] = tokens.access_token
    if tokens.refresh_token:
        kept["refresh_token"] = tokens.refresh_token
    session.secrets = kept
    session.status = OAuthStatus.AUTHORIZED
    session.error = ""
    session.scope = tokens.scope or session.scope
    session.expires_at = timezone.now() + dt.timedelta(seconds=tokens.expires_in) if tokens.expires_in else None
    session.save()


def authorized_session(*, server: MCPServer, user: User | None = None) -> MCPOAuthSession | None:
    """The organization's authorized session for ``server``: ``user``'s own first, else the latest one."""
    sessions = MCPOAuthSession.objects.for_org(server.organization_id).filter(
        server=server, status=OAuthStatus.AUTHORIZED
    )
    own = sessions.filter(created_by=user).first() if user is not None else None
    return own or sessions.first()


def oauth_bearer(*, server: MCPServer, user: User | None = None) -> str:
    """The access token to send to ``server`` (refreshed first when it is about to expire); empty if none."""
    session = authorized_session(server=server, user=user)
    if session is None:
        return ""
    margin = dt.timedelta(seconds=float(settings.MCP_OAUTH_REFRESH_MARGIN))
    if session.expires_at is None or session.expires_at - margin > timezone.now():
        return session.secret("access_token")
    with transaction.atomic():
        session = MCPOAuthSession.objects.select_for_update().get(pk=session.pk)
        if session.expires_at is not None and session.expires_at - margin <= timezone.now():
            _refresh(session)
    return session.secret("access_token") if session.status == OAuthStatus.AUTHORIZED else ""


def _refresh(session: MCPOAuthSession) -> None:
    refresh_token = session.secret("refresh_token")
    if not refresh_token:
        oauth_fail(session=session, error="The access token expired and the server gave no refresh token.")
        return
    form: dict[str, Any] = {
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
        "client_id": session.client_id,
        "resource": session.resource,
    }
    try:
        tokens = async_to_sync(request_tokens)(session.token_endpoint, _with_secret(session, form))
    except MCPOAuthFailed as exc:
        oauth_fail(session=session, error=f"Refreshing the access token failed: {exc.detail}")
        return
    if tokens.refresh_token is None:
        tokens.refresh_token = refresh_token
    _store(session, tokens)
