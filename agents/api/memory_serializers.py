"""Request bodies of blocks and archival memory."""

from __future__ import annotations

from rest_framework import serializers

from agents.api.fields import MAX_STORED_INT, Stricter, optional


class BlockUpdateInput(serializers.Serializer):
    """Letta's ``BlockUpdate``: any of the fields."""

    label = optional(serializers.CharField, max_length=200)
    value = optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    limit = optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    description = optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    read_only = optional(serializers.BooleanField)
    metadata = optional(serializers.DictField)
    tags = optional(serializers.ListField, child=serializers.CharField())
    name = optional(serializers.CharField, allow_blank=True)
    is_template = optional(serializers.BooleanField)
    hidden = optional(serializers.BooleanField)


class BlockCreateInput(Stricter, BlockUpdateInput):
    """Letta's ``CreateBlock``: a label and a value, the rest optional; template fields are ignored."""

    needs = ("label", "value")


class PassageCreateInput(serializers.Serializer):
    text = serializers.CharField(trim_whitespace=False)
    tags = optional(serializers.ListField, child=serializers.CharField())
    created_at = optional(serializers.DateTimeField)
