"""Organization scoping shared by every organization-owned model.

Each such model's manager is built from ``OrgScopedQuerySet`` (or a subclass with the
model's own filters); ``Model.objects.for_org(org)`` is the one way views, serializers, consumers,
tasks and admin pages reach its rows.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self, TypedDict, Unpack, cast

from django.conf import settings
from django.db import models
from django.db.models import Q, QuerySet

from core.errors import NotFound

if TYPE_CHECKING:
    from accounts.models import Organization


class OrgScopedQuerySet(models.QuerySet):
    def for_org(self, organization: Organization | uuid.UUID | None) -> Self:
        """Rows owned by ``organization``; nothing at all for ``None``."""
        if organization is None:
            return self.none()
        return self.filter(organization=organization)

    def get_public(self, public_id: Any, *, missing: str, error: type[NotFound] = NotFound) -> Any:
        """The row of these whose public id (``agent-<uuid>``) is ``public_id``, else ``error(missing)``:
        a malformed id and another organization's row get the same answer."""
        model = cast("type[PublicIdModel]", self.model)
        pk = model.parse_public_id(public_id)
        row = self.filter(pk=pk).first() if pk else None
        if row is None:
            raise error(missing)
        return row


class PublicIdModel(models.Model):
    """A UUID primary key shown on the wire with a Letta-style prefix (``agent-<uuid>``)."""

    id_prefix: ClassVar[str] = ""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)

    class Meta:
        abstract = True

    @property
    def public_id(self) -> str:
        return f"{self.id_prefix}-{self.id}"

    @classmethod
    def parse_public_id(cls, value: Any) -> uuid.UUID | None:
        """The UUID inside ``agent-<uuid>`` (or a bare UUID); ``None`` when malformed."""
        if not isinstance(value, str):
            return None
        prefix = f"{cls.id_prefix}-"
        raw = value[len(prefix) :] if value.startswith(prefix) else value
        try:
            return uuid.UUID(raw)
        except ValueError:
            return None


class AuthoredModel(models.Model):
    """A row a person made (``created_by`` stays empty once they are gone), with its creation and update times."""

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


Order = Literal["asc", "desc"]


class Cursor(TypedDict, total=False):
    """Which page of a list: rows ``after`` / ``before`` a row (its public id), at most ``limit``, in ``order``.

    A list route reads the four once (``OrgScopedAPIView.cursor``); a selector takes them as
    ``**cursor`` and hands them on to ``page``, with its own defaults where a key is missing:
    ``page(rows, Block, **(Cursor(limit=100, order="asc") | cursor))``. ``page``'s own: 50, newest first.
    """

    after: str | None
    before: str | None
    limit: int
    order: Order


def page(
    rows: QuerySet[Any],
    model: type[PublicIdModel],
    *,
    fields: tuple[str, str] = ("created_at", "pk"),
    cursor_field: str = "pk",
    **cursor: Unpack[Cursor],
) -> list[Any]:
    """One page of ``rows`` ordered by ``fields`` (creation time, then id); ``after``/``before`` follow that order.

    A cursor is the public id of a ``model`` row, found among ``rows`` through
    ``cursor_field``; a cursor that is not among them is a 404. Past the end: ``[]``.
    ``before`` alone answers the ``limit`` rows nearest the cursor (still in ``order``),
    so a client paging backwards with ``before=<first id>`` skips nothing.
    """
    after, before = cursor.get("after"), cursor.get("before")
    limit = cursor.get("limit", 50)
    descending = cursor.get("order", "desc") == "desc"
    first, second = fields
    for public_id, later in ((after, True), (before, False)):
        if not public_id:
            continue
        pk = model.parse_public_id(public_id)
        anchor = rows.filter(**{cursor_field: pk}).values_list(first, second).first() if pk else None
        if anchor is None:
            raise NotFound(f"{model.__name__} {public_id} not found")
        value, tiebreak = anchor
        newer = Q(**{f"{first}__gt": value}) | Q(**{first: value, f"{second}__gt": tiebreak})
        older = Q(**{f"{first}__lt": value}) | Q(**{first: value, f"{second}__lt": tiebreak})
        rows = rows.filter(older if later == descending else newer)
    ordering = (f"-{first}", f"-{second}") if descending else (first, second)
    if before and not after:
        nearest_first = tuple(f.removeprefix("-") if f.startswith("-") else f"-{f}" for f in ordering)
        return list(reversed(rows.order_by(*nearest_first)[:limit]))
    return list(rows.order_by(*ordering)[:limit])
