"""The one place a request's organization is resolved, and the per-object gates.

Browser requests carry a session and the organization the user picked (kept in
the session); API requests carry a key, and the key decides the organization.
Another organization's object is always ``Http404``, never a 403 that would
confirm it exists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from accounts.models import ApiKey, Membership, Organization
from accounts.pages import or_404

if TYPE_CHECKING:
    from django.http import HttpRequest
    from rest_framework.request import Request

    from accounts.models import User
    from accounts.scoping import PublicIdModel

SESSION_ORGANIZATION_KEY = "organization_id"

M = TypeVar("M", bound="PublicIdModel")


def membership_for(user: User, organization_id: Any = None) -> Membership | None:
    """The user's membership in ``organization_id``, else their oldest one."""
    memberships = Membership.objects.filter(user=user).select_related("organization").order_by("created_at")
    if organization_id:
        chosen = memberships.filter(organization_id=organization_id).first()
        if chosen is not None:
            return chosen
    return memberships.first()


def resolve_request_organization(request: HttpRequest) -> tuple[Organization | None, Membership | None]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None, None
    membership = membership_for(user, request.session.get(SESSION_ORGANIZATION_KEY))
    if membership is None:
        return None, None
    return membership.organization, membership


def organization_of(request: HttpRequest | Request) -> Organization | None:
    """The organization a (Django or DRF) request acts for."""
    auth = getattr(request, "auth", None)
    if isinstance(auth, ApiKey):
        return auth.organization
    return getattr(request, "organization", None)


class _APIView(Protocol):
    request: Request


# For an API view: the organization its request acts for, the person behind it, its text parameters.
# (No docstring: drf-spectacular would make it every operation's description.)
class OrganizationRequestMixin:
    @property
    def organization(self: _APIView) -> Organization | None:
        return organization_of(self.request)

    @property
    def acting_user(self: _APIView) -> User | None:
        """The person behind the request (a key's creator, or the logged-in user), if any."""
        user = getattr(self.request, "user", None)
        return user if user is not None and user.is_authenticated else None

    def query_str(self: _APIView, name: str) -> str | None:
        value = self.request.query_params.get(name)
        return value if value not in (None, "") else None


def session_user_id(request: HttpRequest | Request) -> Any:
    """The logged-in user behind a browser request (DRF replaces ``request.user`` with its own): the
    user of the membership ``CurrentOrganizationMiddleware`` found, else ``None``."""
    django_request = getattr(request, "_request", request)
    membership = getattr(django_request, "membership", None)
    return membership.user_id if membership is not None else None


def get_for_org(model: type[M], organization: Organization | None, public_id: Any) -> M:
    """Fetch ``model`` by its public id within ``organization``, or raise ``Http404``."""
    # Abstract PublicIdModel declares no manager; every concrete model has an OrgScoped one.
    rows = model.objects.for_org(organization)  # type: ignore[attr-defined]
    row: M = or_404(rows.get_public, public_id, missing=f"{model.__name__} not found")
    return row
