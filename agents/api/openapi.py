"""The API's OpenAPI schema class (``DEFAULT_SCHEMA_CLASS``) and shared parameter schemas.

Kept apart from ``agents.api.schema``: DRF imports this class while drf-spectacular's
views module, which that one imports, is being defined.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema

# ``limit`` of every list: ``OrgScopedAPIView.query_int``'s default bounds.
LIMIT = {"type": "integer", "minimum": 1, "maximum": 1000}


class ApiAutoSchema(AutoSchema):
    """drf-spectacular's schema, with the error answers every operation can give documented:
    422 (a body or query parameter that does not validate) wherever there is input,
    401 (no key, or a bad one) and 429 (the key's rate limit) wherever a key is needed."""

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        from agents.api.serializers import ErrorOutput

        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return operation
        error = {"application/json": {"schema": self.resolve_serializer(ErrorOutput, "response").ref}}
        responses = operation["responses"]
        queried = any(parameter["in"] == "query" for parameter in operation.get("parameters", []))
        if queried or "requestBody" in operation:
            responses.setdefault("422", {"description": "Input that does not validate, by field.", "content": error})
        if operation.get("security"):
            responses.setdefault("401", {"description": "No API key, or one that is invalid.", "content": error})
            responses.setdefault("429", {"description": "The key's rate limit; see Retry-After.", "content": error})
        operation["responses"] = dict(sorted(responses.items()))
        return operation
