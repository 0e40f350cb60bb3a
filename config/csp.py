"""The Content-Security-Policy of every page (django-csp), with the WebSocket origin of the request's host.

The policy itself is ``CONTENT_SECURITY_POLICY`` in the settings: scripts and styles from our own
origin only, nothing inline. ``connect-src`` adds ``ws://`` and ``wss://`` of the host the page was
served from, for browsers that do not count them as ``'self'``.
"""

from __future__ import annotations

from csp.middleware import CSPMiddleware, PolicyParts
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponseBase


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        try:
            host = request.get_host()
        except DisallowedHost:
            return parts
        parts.update = {**(parts.update or {}), "connect-src": [f"ws://{host}", f"wss://{host}"]}
        return parts
