"""An organization's MCP servers: where they are, how to reach them, and how to authenticate.

The token and the custom headers are encrypted at rest (``EncryptedJSONField``) and never
leave the server except in the answers Letta's routes give to the organization itself.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.db import models

from accounts.fields import EncryptedJSONField
from accounts.scoping import AuthoredModel, OrgScopedQuerySet, PublicIdModel


class ServerType(models.TextChoices):
    STREAMABLE_HTTP = "streamable_http", "Streamable HTTP"
    SSE = "sse", "Server-sent events (SSE)"
    STDIO = "stdio", "Local command (stdio)"


class MCPServer(AuthoredModel, PublicIdModel):
    id_prefix = "mcp_server"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="mcp_servers")
    server_name = models.CharField(max_length=200)
    server_type = models.CharField(max_length=20, choices=ServerType.choices, default=ServerType.STREAMABLE_HTTP)
    server_url = models.URLField(max_length=2000, blank=True)
    secrets = EncryptedJSONField(
        default=dict, blank=True, editable=False, help_text="The bearer token and custom headers (encrypted)."
    )
    stdio_config = models.JSONField(default=dict, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    last_checked_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    objects = OrgScopedQuerySet.as_manager()

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["organization", "server_name"], name="unique_mcp_server_name_per_org"),
        ]
        ordering: ClassVar = ["server_name"]
        verbose_name = "MCP server"

    def __str__(self) -> str:
        return self.server_name

    @property
    def token(self) -> str:
        """The bearer token, without ``Bearer ``; empty when none is stored."""
        return str((self.secrets or {}).get("token") or "")

    @property
    def custom_headers(self) -> dict[str, str]:
        headers: Any = (self.secrets or {}).get("custom_headers") or {}
        return {str(key): str(value) for key, value in headers.items()}

    def set_auth(self, *, token: str | None, custom_headers: dict[str, str] | None) -> None:
        """Store a token (a leading ``Bearer `` dropped) and the custom headers, as Letta does."""
        secrets: dict[str, Any] = {}
        if token:
            secrets["token"] = token.removeprefix("Bearer ").strip()
        if custom_headers:
            secrets["custom_headers"] = dict(custom_headers)
        self.secrets = secrets


class OAuthStatus(models.TextChoices):
    PENDING = "pending", "Waiting for the person to authorize"
    AUTHORIZED = "authorized", "Authorized"
    FAILED = "failed", "Failed"


class MCPOAuthSession(AuthoredModel, PublicIdModel):
    """One OAuth 2.1 connection of a person (``created_by``) of an organization to one of its MCP servers.

    Pending, it holds the PKCE verifier and the ``state`` the authorization server sends back;
    authorized, the access and refresh tokens. Every secret (the verifier, the client secret,
    the tokens) is in ``secrets``, encrypted at rest like the servers' own tokens.
    """

    id_prefix = "mcp-oauth"

    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="mcp_oauth_sessions"
    )
    server = models.ForeignKey(MCPServer, on_delete=models.CASCADE, related_name="oauth_sessions")
    status = models.CharField(max_length=20, choices=OAuthStatus.choices, default=OAuthStatus.PENDING)
    state = models.CharField(max_length=100, unique=True)
    redirect_uri = models.URLField(max_length=2000)
    authorization_endpoint = models.URLField(max_length=2000)
    token_endpoint = models.URLField(max_length=2000)
    resource = models.URLField(max_length=2000, blank=True)
    client_id = models.CharField(max_length=500)
    scope = models.TextField(blank=True)
    secrets = EncryptedJSONField(
        default=dict, blank=True, editable=False, help_text="PKCE verifier, client secret, tokens (encrypted)."
    )
    expires_at = models.DateTimeField(null=True, blank=True, help_text="When the access token expires.")
    error = models.TextField(blank=True)

    objects = OrgScopedQuerySet.as_manager()

    class Meta:
        ordering: ClassVar = ["-updated_at"]
        verbose_name = "MCP OAuth session"

    def __str__(self) -> str:
        return f"{self.server_id} ({self.status})"

    def secret(self, name: str) -> str:
        return str((self.secrets or {}).get(name) or "")
