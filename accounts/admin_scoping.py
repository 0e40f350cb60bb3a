"""Organization scoping for the Django admin.

Superusers see every row. Other staff see and edit only the rows of the
organizations they manage (they are an owner or admin there; a plain member's
staff flag gives them nothing): the changelist, the change pages, foreign-key
choices and saves are all restricted, and another organization's row is a 404.
Nobody, superusers included, moves an existing row to another organization (or
another organization's agent): that field is read-only once the row exists.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from django.contrib.admin.options import InlineModelAdmin
from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.db import models
from django.http import Http404

from accounts.models import Membership, Organization, Role, User

if TYPE_CHECKING:
    from django.contrib.admin import ModelAdmin
    from django.forms import ModelChoiceField, ModelForm, ModelMultipleChoiceField
    from django.http import HttpRequest

    # What the mixins are mixed into, so their super() calls are checked.
    _AdminBase = ModelAdmin[Any]
else:
    _AdminBase = object


def admin_organization_ids(request: HttpRequest) -> list[uuid.UUID] | None:
    """The organizations a staff member may administer (as owner or admin); ``None`` means all (superusers).

    Computed once per request and kept on it.
    """
    user = request.user
    if user.is_superuser:
        return None
    if not user.is_authenticated:
        return []  # the admin site lets only staff in; this keeps the lookup below typed
    cached = getattr(request, "_admin_organization_ids", None)
    if cached is None:
        managed = Membership.objects.filter(user_id=user.pk, role__in=(Role.OWNER, Role.ADMIN))
        cached = list(managed.values_list("organization_id", flat=True))
        request._admin_organization_ids = cached  # type: ignore[attr-defined]  # a per-request cache
    return cached


def scope_to_organizations(queryset: models.QuerySet, organization_path: str, ids: list[uuid.UUID]) -> models.QuerySet:
    """Rows of ``queryset`` whose ``organization_path`` is one of ``ids``."""
    if organization_path == "pk":
        return queryset.filter(pk__in=ids)
    if organization_path == "memberships__organization":
        # A user is visible through any of their memberships; a subquery avoids duplicate rows.
        return queryset.filter(pk__in=Membership.objects.filter(organization_id__in=ids).values("user_id"))
    return queryset.filter(**{f"{organization_path}__in": ids})


def organization_path_of(model: type[models.Model]) -> str | None:
    """How ``model`` reaches its organization, for foreign-key choices."""
    if model is Organization:
        return "pk"
    if model is User:
        return "memberships__organization"
    field_names = {field.name for field in model._meta.get_fields()}
    if "organization" in field_names:
        return "organization"
    if "agent" in field_names:
        return "agent__organization"
    return None


class OrgScopedAdminMixin(_AdminBase):
    """Restricts a ``ModelAdmin`` or inline to the staff member's organizations.

    ``organization_path`` is the lookup from the model to its ``Organization``
    (``"organization"``, ``"agent__organization"``, ``"pk"`` for Organization itself).
    """

    organization_path: str = "organization"

    def get_queryset(self, request: HttpRequest) -> models.QuerySet:
        queryset = super().get_queryset(request)
        ids = admin_organization_ids(request)
        if ids is None:
            return queryset
        return scope_to_organizations(queryset, self.organization_path, ids)

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Any:
        obj = super().get_object(request, object_id, from_field)
        if obj is None:
            # Django would redirect with "does not exist"; a plain 404 says the same for
            # missing rows and other organizations' rows alike.
            raise Http404("Not found")
        return obj

    def formfield_for_foreignkey(
        self, db_field: models.ForeignKey[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField[Any] | None:
        _scope_choices(db_field, request, kwargs)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(
        self, db_field: models.ManyToManyField[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> ModelMultipleChoiceField[Any] | None:
        _scope_choices(db_field, request, kwargs)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        readonly = tuple(super().get_readonly_fields(request, obj))
        owner_field = self.organization_path.split("__", 1)[0]
        inline = isinstance(self, InlineModelAdmin)  # its ``obj`` is the parent row, already in place
        if obj is None or inline or owner_field in ("pk", "memberships") or owner_field in readonly:
            return readonly
        return (*readonly, owner_field)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        if self.organization_path == "pk" and not request.user.is_superuser:
            return False  # a new organization would be outside the staff member's scope
        return super().has_add_permission(request, *args)

    def save_model(self, request: HttpRequest, obj: Any, form: ModelForm[Any], change: bool) -> None:
        self.check_in_scope(request, obj)
        super().save_model(request, obj, form, change)

    def check_in_scope(self, request: HttpRequest, obj: models.Model) -> None:
        """Refuse to save a row into an organization the staff member does not belong to."""
        ids = admin_organization_ids(request)
        if ids is None or self.organization_path in ("pk", "memberships__organization"):
            return
        organization_id: Any = obj
        for part in self.organization_path.split("__"):
            organization_id = getattr(organization_id, part, None)
        organization_id = getattr(organization_id, "pk", None)
        if organization_id not in ids:
            raise PermissionDenied("That organization is outside what you administer.")


def _scope_choices(
    db_field: models.ForeignKey[Any, Any] | models.ManyToManyField[Any, Any],
    request: HttpRequest,
    kwargs: dict[str, Any],
) -> None:
    """Offer as choices of ``db_field`` only rows of the staff member's organizations (unless a queryset is given)."""
    ids = admin_organization_ids(request)
    path = organization_path_of(db_field.related_model)
    if ids is not None and path is not None and "queryset" not in kwargs:
        related = db_field.related_model._default_manager.using(kwargs.get("using"))
        kwargs["queryset"] = scope_to_organizations(related.all(), path, ids)


def acting_membership(request: HttpRequest, organization_id: Any) -> Membership | None:
    """The staff member's membership in ``organization_id``: who acts, for the services' role rules.

    ``None`` for a superuser who is not a member (the operator, whom no role limits).
    """
    user_id = request.user.pk
    if user_id is None:
        raise PermissionDenied("That organization is outside what you administer.")
    if (
        request.user.is_superuser
        and not Membership.objects.filter(user_id=user_id, organization_id=organization_id).exists()
    ):
        return None
    membership = (
        Membership.objects.select_related("organization")
        .filter(user_id=user_id, organization_id=organization_id)
        .first()
    )
    if membership is None:
        raise PermissionDenied("That organization is outside what you administer.")
    return membership


class PublicIdSearchMixin(_AdminBase):
    """Lets the admin search box find a row by its public id (``run-<uuid>``) or bare UUID."""

    def get_search_results(
        self, request: HttpRequest, queryset: models.QuerySet, search_term: str
    ) -> tuple[models.QuerySet, bool]:
        model = queryset.model
        parse = getattr(model, "parse_public_id", None)
        term = search_term.strip()
        if parse is not None and term:
            pk = parse(term)
            if pk is not None:
                return queryset.filter(pk=pk), False
            for field_name in ("agent", "run"):
                related = _related_model(model, field_name)
                related_pk = related.parse_public_id(term) if related is not None else None
                if related_pk is not None:
                    return queryset.filter(**{f"{field_name}_id": related_pk}), False
        return super().get_search_results(request, queryset, search_term)


def _related_model(model: type[models.Model], field_name: str) -> Any:
    try:
        field = model._meta.get_field(field_name)
    except FieldDoesNotExist:
        return None
    related = getattr(field, "related_model", None)
    return related if hasattr(related, "parse_public_id") else None


class ReadOnlyAdminMixin(_AdminBase):
    """Rows written by the agent loop: viewable, deletable, never added or edited by hand."""

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
