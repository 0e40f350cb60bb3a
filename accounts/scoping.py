"""Organization scoping shared by every organization-owned model.

Each such model's manager is built from a subclass of ``OrgScopedQuerySet``;
``Model.objects.for_org(org)`` is the one way views, serializers, consumers,
tasks and admin pages reach its rows.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, ClassVar, Self

from django.db import models

if TYPE_CHECKING:
    from accounts.models import Organization


class OrgScopedQuerySet(models.QuerySet):
    def for_org(self, organization: Organization | uuid.UUID | None) -> Self:
        """Rows owned by ``organization``; nothing at all for ``None``."""
        if organization is None:
            return self.none()
        return self.filter(organization=organization)


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
