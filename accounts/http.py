"""Request types for views that run behind the login and organization decorators."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import HttpRequest

if TYPE_CHECKING:
    from accounts.models import Membership, Organization, User


class AuthenticatedHttpRequest(HttpRequest):
    user: User


class OrganizationHttpRequest(AuthenticatedHttpRequest):
    """What ``membership_required`` guarantees: set once per request by the middleware."""

    organization: Organization
    membership: Membership
