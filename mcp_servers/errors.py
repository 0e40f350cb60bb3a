"""The errors of MCP servers, each with the HTTP status Letta answers (``core.errors``)."""

from __future__ import annotations

from core.errors import ApplicationError, InvalidArgument, NotFound


class MCPConnectionFailed(ApplicationError):
    """The server could not be reached, refused us, or broke the connection (Letta's 502)."""

    status_code = 502
    default_detail = "Failed to connect to MCP server."


class MCPAuthorizationRequired(MCPConnectionFailed):
    """The server answers 401: it wants an OAuth authorization this organization has not given it."""


class MCPOAuthFailed(MCPConnectionFailed):
    """The OAuth flow with the server's authorization server failed (discovery, registration, tokens)."""


class MCPTimeout(ApplicationError):
    """The server did not answer within the configured timeout (Letta's ``TIMEOUT``, 408)."""

    status_code = 408

    def __init__(self, message: str) -> None:
        super().__init__(f"TIMEOUT: {message}")


class MCPProtocolError(MCPConnectionFailed):
    """The server answered something that is not MCP, or an MCP error (Letta's ``McpError``: 502)."""


class MCPElicitationRequired(MCPProtocolError):
    """The server asked the person for input mid-call (elicitation) and no answer was at hand: the call did not
    complete. ``requests`` are the questions (``message`` and ``requested_schema``), in the order asked; an
    agent's call asks the person and runs again (``mcp_servers.runner``), any other call ends with this error."""

    def __init__(self, message: str, requests: list[dict[str, object]]) -> None:
        super().__init__(message)
        self.requests = requests


class UnsafeMCPURL(InvalidArgument):
    """The URL is not http(s), holds credentials, or names a private address the operator has not allowed."""


class StdioDisabled(ApplicationError):
    status_code = 400
    default_detail = "MCP stdio servers are disabled. Set MCP_ENABLE_STDIO=true to enable them."


class MCPServerNotFound(NotFound):
    pass
