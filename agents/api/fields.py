"""What the API's input serializers share: optional fields, the integer bound, stricter variants, and
the validated data of a body."""

from __future__ import annotations

from typing import Any, ClassVar

from rest_framework import serializers

# The largest value the integer columns (``PositiveIntegerField``) hold on every database.
MAX_STORED_INT = 2**31 - 1


def optional(field_class: type[Any], *args: Any, **kwargs: Any) -> Any:
    """An optional, nullable field (DRF rebuilds fields from their arguments, so set them there)."""
    return field_class(*args, required=False, allow_null=True, **kwargs)


def validated(serializer_class: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    """``data`` as ``serializer_class`` validates it; one that does not validate is a 422."""
    body = serializer_class(data=data)
    body.is_valid(raise_exception=True)
    return dict(body.validated_data)


class Stricter(serializers.Serializer):
    """A variant of the input serializer it is mixed into: the fields in ``needs`` become required
    (and not null), those in ``leaves_out`` go; the others, and their order, stay as they are."""

    needs: ClassVar[tuple[str, ...]] = ()
    leaves_out: ClassVar[tuple[str, ...]] = ()

    def get_fields(self) -> dict[str, Any]:
        fields = dict(super().get_fields())
        for name in self.leaves_out:
            del fields[name]
        for name in self.needs:
            fields[name].required, fields[name].allow_null = True, False
        return fields
