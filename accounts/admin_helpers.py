"""What every app's admin shows or does the same way (scoping is ``accounts.admin_scoping``).

JSON fields shown indented, a sortable count of related rows, and the person who
created a row set on its first save.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.db.models import Count
from django.utils.html import format_html

if TYPE_CHECKING:
    from django.contrib.admin import ModelAdmin
    from django.db.models import Model, QuerySet
    from django.forms import ModelForm
    from django.http import HttpRequest

    _AdminBase = ModelAdmin[Any]
else:
    _AdminBase = object

AdminColumn = Callable[[Any, Any], Any]


def pretty_json(value: Any) -> str:
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False))


def json_field(attribute: str, description: str) -> AdminColumn:
    """A read-only field showing the row's ``attribute`` as indented JSON."""

    @admin.display(description=description)
    def show(model_admin: Any, obj: Any) -> str:
        return pretty_json(getattr(obj, attribute))

    return show


def with_count(queryset: QuerySet[Any], relation: str) -> QuerySet[Any]:
    """``queryset`` with the number of each row's ``relation`` rows, for ``count_column``."""
    counted: QuerySet[Any] = queryset.annotate(Count(relation, distinct=True))
    return counted


def count_column(relation: str, description: str) -> AdminColumn:
    """A list column, sortable, of how many ``relation`` rows a row has (its queryset goes through ``with_count``)."""
    annotation = f"{relation}__count"

    @admin.display(description=description, ordering=annotation)
    def count(model_admin: Any, obj: Any) -> int:
        return getattr(obj, annotation, 0)

    return count


class CreatedByAdminMixin(_AdminBase):
    """A row added in the admin is created by the staff member who adds it."""

    def save_model(self, request: HttpRequest, obj: Model, form: ModelForm[Any], change: bool) -> None:
        if not change and getattr(obj, "created_by_id", None) is None:
            obj.created_by = request.user  # type: ignore[attr-defined]  # the admin admits only logged-in staff
        super().save_model(request, obj, form, change)
