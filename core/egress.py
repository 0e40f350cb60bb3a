"""Where an organization's own provider base URL may point (server-side request forgery).

An organization may point the OpenAI- or Anthropic-compatible client at a server of its
choice. Without a check, that URL could name the server's own neighbours: loopback
(Redis, Postgres, the admin), private networks, or link-local cloud metadata
(``169.254.169.254``). ``check_provider_url`` resolves the host and refuses any address
that is not globally routable, unless the operator lists the host, the address or its
network in ``PROVIDER_ALLOWED_PRIVATE_HOSTS`` (e.g. ``["llm.internal", "10.0.0.0/8"]``).

The operator's own ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL`` are trusted and never
checked. The check runs when the URL is saved and again before every model call (an
address can change between the two); SDK clients are also built with redirects off.

``public_addresses`` is the same rule for a client that connects itself (``fetch_webpage``):
it returns the checked addresses, and the caller connects to one of them, so a second DNS
answer (rebinding) cannot send it elsewhere.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from django.conf import settings

logger = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsafeProviderURL(ValueError):
    """The URL may not be used as a provider base URL; the message is safe to show its organization."""


def check_provider_url(url: str) -> None:
    """Raise ``UnsafeProviderURL`` unless ``url`` is http(s) and every address of its host is public or allowed."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise UnsafeProviderURL("The base URL must be an http:// or https:// URL with a host name.")
    if parts.username or parts.password:
        raise UnsafeProviderURL("The base URL must not hold a user name or password.")
    host = parts.hostname.lower().rstrip(".")
    allowed = _allowed(getattr(settings, "PROVIDER_ALLOWED_PRIVATE_HOSTS", []) or [])
    if host in allowed.hosts:
        return
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UnsafeProviderURL("The base URL has an invalid port.") from exc
    addresses = _resolve(host, port)
    refused = [address for address in addresses if not _public(address) and not allowed.covers(address)]
    if refused:
        logger.warning("Refused provider base URL %s: %s resolves to %s", url, host, ", ".join(map(str, refused)))
        raise UnsafeProviderURL(
            f"The base URL's host {host} is a private, loopback or link-local address; "
            "the server operator must allow it (PROVIDER_ALLOWED_PRIVATE_HOSTS)."
        )


class PrivateAddress(ValueError):
    """The host has an address that is not globally routable and that the allowlist does not name."""


def public_addresses(host: str, port: int, *, allowed: Iterable[str]) -> list[IPAddress]:
    """The addresses of ``host``, each public or covered by ``allowed`` (host names, addresses, CIDR networks).

    Raises ``PrivateAddress`` otherwise (the addresses are logged, not in the message), and
    ``OSError`` or ``UnicodeError`` when the host does not resolve. Blocking: call it on a thread.
    """
    host = host.lower().rstrip(".")
    rules = _allowed(allowed)
    addresses = _addresses(host, port)
    if host in rules.hosts:
        return addresses
    refused = [address for address in addresses if not _public(address) and not rules.covers(address)]
    if refused:
        logger.warning("Refused a connection to %s: it resolves to %s", host, ", ".join(map(str, refused)))
        raise PrivateAddress(f"{host} is a private, loopback or link-local address")
    return addresses


def _resolve(host: str, port: int) -> list[IPAddress]:
    try:
        return _addresses(host, port)
    except (OSError, UnicodeError) as exc:
        logger.warning("Provider base URL host %s does not resolve: %s", host, exc)
        raise UnsafeProviderURL(f"The base URL's host {host} cannot be resolved.") from exc


def _addresses(host: str, port: int) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos))


def _public(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


class _Allowed:
    def __init__(self, hosts: set[str], networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> None:
        self.hosts = hosts
        self.networks = networks

    def covers(self, address: IPAddress) -> bool:
        return any(address.version == network.version and address in network for network in self.networks)


def _allowed(entries: Iterable[str]) -> _Allowed:
    hosts: set[str] = set()
    networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for entry in entries:
        text = str(entry).strip().lower()
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            hosts.add(text.rstrip("."))
    return _Allowed(hosts, networks)
