"""Request bodies and response shapes (for the OpenAPI schema) of blocks and archival memory."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

MAX_STORED_INT = 2**31 - 1


def _optional(field_class: type[Any], *args: Any, **kwargs: Any) -> Any:
    return field_class(*args, required=False, allow_null=True, **kwargs)


class BlockCreateInput(serializers.Serializer):
    """Letta's ``CreateBlock``: a label and a value, the rest optional; template fields are ignored."""

    label = serializers.CharField(max_length=200)  # type: ignore[assignment]  # a declared field, not Field's attribute (the metaclass collects it)
    value = serializers.CharField(allow_blank=True, trim_whitespace=False)
    limit = _optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    description = _optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    read_only = _optional(serializers.BooleanField)
    metadata = _optional(serializers.DictField)
    tags = _optional(serializers.ListField, child=serializers.CharField())
    name = _optional(serializers.CharField, allow_blank=True)
    is_template = _optional(serializers.BooleanField)
    hidden = _optional(serializers.BooleanField)


class BlockUpdateInput(serializers.Serializer):
    """Letta's ``BlockUpdate``: any of the fields."""

    label = _optional(serializers.CharField, max_length=200)
    value = _optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    limit = _optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    description = _optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    read_only = _optional(serializers.BooleanField)
    metadata = _optional(serializers.DictField)
    tags = _optional(serializers.ListField, child=serializers.CharField())
    name = _optional(serializers.CharField, allow_blank=True)
    is_template = _optional(serializers.BooleanField)
    hidden = _optional(serializers.BooleanField)


class BlockOutput(serializers.Serializer):
    id = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a declared field, not Field's attribute (the metaclass collects it)
    value = serializers.CharField(allow_blank=True)
    limit = serializers.IntegerField()
    description = serializers.CharField(allow_null=True)
    read_only = serializers.BooleanField()  # type: ignore[assignment]  # a declared field, not Field's attribute (the metaclass collects it)
    metadata = serializers.DictField()
    tags = serializers.ListField(child=serializers.CharField())
    is_template = serializers.BooleanField()
    preserve_on_migration = serializers.BooleanField()
    project_id = serializers.CharField(allow_null=True)
    template_name = serializers.CharField(allow_null=True)
    template_id = serializers.CharField(allow_null=True)
    base_template_id = serializers.CharField(allow_null=True)
    deployment_id = serializers.CharField(allow_null=True)
    entity_id = serializers.CharField(allow_null=True)
    hidden = serializers.BooleanField(allow_null=True)
    created_by_id = serializers.CharField(allow_null=True)
    last_updated_by_id = serializers.CharField(allow_null=True)
    created_at = serializers.CharField(allow_null=True)
    updated_at = serializers.CharField(allow_null=True)


class MemoryOutput(serializers.Serializer):
    agent_type = serializers.CharField()
    blocks = BlockOutput(many=True)
    file_blocks = serializers.ListField(child=serializers.JSONField())
    prompt_template = serializers.CharField(allow_blank=True)


class PassageCreateInput(serializers.Serializer):
    text = serializers.CharField(trim_whitespace=False)
    tags = _optional(serializers.ListField, child=serializers.CharField())
    created_at = _optional(serializers.DateTimeField)


class PassageOutput(serializers.Serializer):
    id = serializers.CharField()
    text = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    agent_id = serializers.CharField()
    metadata = serializers.DictField()
    embedding = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    embedding_config = serializers.JSONField(allow_null=True)
    archive_id = serializers.CharField(allow_null=True)
    source_id = serializers.CharField(allow_null=True)
    file_id = serializers.CharField(allow_null=True)
    file_name = serializers.CharField(allow_null=True)
    is_deleted = serializers.BooleanField()
    created_by_id = serializers.CharField(allow_null=True)
    last_updated_by_id = serializers.CharField(allow_null=True)
    created_at = serializers.CharField(allow_null=True)
    updated_at = serializers.CharField(allow_null=True)


class ArchivalSearchResultOutput(serializers.Serializer):
    timestamp = serializers.CharField()
    content = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())


class ArchivalSearchOutput(serializers.Serializer):
    results = ArchivalSearchResultOutput(many=True)
    count = serializers.IntegerField()
