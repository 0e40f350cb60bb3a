"""Where an organization's MCP server may be: public addresses, or the private ones the operator allows.

The rule is ``core.egress.public_addresses`` with ``MCP_ALLOWED_PRIVATE_HOSTS`` (hosts, addresses,
CIDR networks): a Docker network or ``127.0.0.1`` can be opened to MCP servers without opening
the cloud metadata address, or any other neighbour, to every organization. It runs when a URL is
saved and again before every connection, since a name may resolve elsewhere later.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

from core.egress import PrivateAddress, public_addresses
from mcp_servers.errors import UnsafeMCPURL


def check_mcp_url(url: str) -> None:
    """Raise ``UnsafeMCPURL`` unless ``url`` may be connected to. Blocking (DNS): call it on a thread."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise UnsafeMCPURL(
            "The MCP server URL must be an http:// or https:// URL with a host name.", field="server_url"
        )
    if parts.username or parts.password:
        raise UnsafeMCPURL("The MCP server URL must not hold a user name or password.", field="server_url")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UnsafeMCPURL("The MCP server URL has an invalid port.", field="server_url") from exc
    try:
        public_addresses(parts.hostname, port, allowed=settings.MCP_ALLOWED_PRIVATE_HOSTS)
    except PrivateAddress as exc:
        raise UnsafeMCPURL(
            f"The MCP server's host {parts.hostname} is a private, loopback or link-local address; "
            "the server operator must allow it (MCP_ALLOWED_PRIVATE_HOSTS).",
            field="server_url",
        ) from exc
    except (OSError, UnicodeError) as exc:
        raise UnsafeMCPURL(f"The MCP server's host {parts.hostname} cannot be resolved.", field="server_url") from exc
