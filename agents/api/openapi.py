"""The API's OpenAPI schema class (``DEFAULT_SCHEMA_CLASS``) and shared parameter schemas.

Answers are documented by their types: ``responses={200: AgentState}``, ``{200: list[Tool]}``,
where the types are the ``TypedDict``s the projections return (``agents.wire``) or the
API's own answers. Their schemas come from pydantic (``TypeAdapter``), each ``TypedDict``
a component of its own, in OpenAPI 3.0's dialect; the request bodies of the turn family
(``agents.engine.inputs``) are pydantic models and are documented the same way.

Kept apart from ``agents.api.schema``: DRF imports this class while drf-spectacular's
views module, which that one imports, is being defined.
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, get_origin, get_type_hints

import typing_extensions
from drf_spectacular.drainage import warn
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from pydantic import TypeAdapter
from pydantic.json_schema import model_json_schema

from agents.api.errors import ErrorResponse
from agents.engine.inputs import RequestModel

REF = "#/components/schemas/{model}"

# ``limit`` of every list: ``OrgScopedAPIView.query_int``'s default bounds.
LIMIT = {"type": "integer", "minimum": 1, "maximum": 1000}


def errors(*codes: int) -> dict[int, Any]:
    """``ErrorResponse`` for each of ``codes``: ``responses={200: Tool, **errors(404, 422)}``."""
    return dict.fromkeys(codes, ErrorResponse)


def cursor_parameters(noun: str, *, limit: int, order: str, order_by: tuple[str, ...] = ("created_at",)) -> list[Any]:
    """The documented ``after`` / ``before`` / ``limit`` / ``order`` / ``order_by`` of a list route."""
    first = "oldest" if order == "asc" else "newest"
    return [
        OpenApiParameter("after", str, description=f"Cursor: a {noun} id; the {noun}s after it in this order."),
        OpenApiParameter("before", str, description=f"Cursor: a {noun} id; the {noun}s before it in this order."),
        OpenApiParameter("limit", LIMIT, description=f"At most this many (default {limit})."),
        OpenApiParameter("order", str, enum=["asc", "desc"], description=f"{first.capitalize()} first by default."),
        OpenApiParameter("order_by", str, enum=list(order_by), description="The sort key."),
    ]


def is_type(annotation: Any) -> bool:
    """Whether ``annotation`` documents an answer by its type: a ``TypedDict``, or ``list[...]`` /
    ``Annotated[...]`` of types (``int`` and the like stay drf-spectacular's)."""
    return typing_extensions.is_typeddict(annotation) or get_origin(annotation) in (list, Annotated)


def _readable(annotation: Any) -> Any:
    """``annotation``, with a ``typing.TypedDict`` rebuilt as the ``typing_extensions`` one pydantic
    reads on Python 3.11."""
    if typing_extensions.is_typeddict(annotation) and type(annotation).__module__ == typing.__name__:
        fields = get_type_hints(annotation, include_extras=True)
        return typing_extensions.TypedDict(annotation.__name__, fields, total=annotation.__total__)  # type: ignore[operator]
    return annotation


class ApiAutoSchema(AutoSchema):
    """drf-spectacular's schema, with answers documented by their types (``is_type``) and the error
    answers every operation can give: 422 (a body or query parameter that does not validate)
    wherever there is input, 413 (a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``) wherever there is a
    body, 401 (no key, or a bad one) and 429 (the key's rate limit) wherever
    a key is needed."""

    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return operation
        error = {"application/json": {"schema": self.type_schema(ErrorResponse)}}
        responses = operation["responses"]
        queried = any(parameter["in"] == "query" for parameter in operation.get("parameters", []))
        if queried or "requestBody" in operation:
            responses.setdefault("422", {"description": "Input that does not validate, by field.", "content": error})
        if "requestBody" in operation:
            responses.setdefault("413", {"description": "A body over the server's size limit.", "content": error})
        if operation.get("security"):
            responses.setdefault("401", {"description": "No API key, or one that is invalid.", "content": error})
            responses.setdefault("429", {"description": "The key's rate limit; see Retry-After.", "content": error})
        operation["responses"] = dict(sorted(responses.items()))
        return operation

    def _get_response_for_code(self, serializer: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(serializer, OpenApiResponse) and is_type(serializer.response):
            typed = self.type_schema(serializer.response)
            serializer = OpenApiResponse(typed, description=serializer.description, examples=serializer.examples)
        elif is_type(serializer):
            serializer = self.type_schema(serializer)
        return super()._get_response_for_code(serializer, *args, **kwargs)  # type: ignore[no-untyped-call]

    def type_schema(self, annotation: Any) -> dict[str, Any]:
        """The schema of ``annotation``, its ``TypedDict``s registered as components."""
        readable = _readable(annotation)
        schema = TypeAdapter(readable).json_schema(ref_template=REF, mode="serialization")
        for name, definition in schema.pop("$defs", {}).items():
            self._register(name, definition)
        if not typing_extensions.is_typeddict(readable):
            return dict(_oas30(schema))
        self._register(readable.__name__, schema)
        return {"$ref": REF.format(model=readable.__name__)}

    def _register(self, name: str, definition: dict[str, Any]) -> None:
        schema = _oas30(definition)
        component = ResolvedComponent(  # type: ignore[no-untyped-call]  # drf-spectacular is untyped
            name=name, type=ResolvedComponent.SCHEMA, object=name, schema=schema
        )
        if component not in self.registry:
            self.registry.register(component)
        elif self.registry[component].schema != schema:
            warn(f"Two different shapes are named {name}: rename one.")


def _oas30(schema: Any) -> Any:
    """Pydantic's JSON Schema (2020-12) in OpenAPI 3.0's dialect: ``nullable`` instead of a
    ``null`` type, ``enum`` instead of ``const``."""
    if isinstance(schema, list):
        return [_oas30(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    schema = {key: _oas30(value) for key, value in schema.items()}
    if "const" in schema:
        schema["enum"] = [schema.pop("const")]
    choices = schema.get("anyOf")
    if isinstance(choices, list) and {"type": "null"} in choices:
        rest = [choice for choice in choices if choice != {"type": "null"}]
        del schema["anyOf"]
        if len(rest) == 1 and "$ref" in rest[0]:
            schema["allOf"] = rest
        elif len(rest) == 1:
            schema = rest[0] | schema
        else:
            schema["anyOf"] = rest
        schema["nullable"] = True
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]  # OpenAPI 3.0.3: a nullable enum lists null
    return schema


class RequestModelSchema(OpenApiSerializerExtension):  # type: ignore[no-untyped-call]  # drf-spectacular is untyped
    """The turn request family (``agents.engine.inputs``) as components, the way clients send it."""

    target_class = RequestModel
    match_subclasses = True
    priority = 1  # before drf-spectacular's own pydantic extension

    def get_name(self, auto_schema: AutoSchema, direction: str) -> str:
        # drf-spectacular suffixes request components with "Request": TurnRequest stays TurnRequest.
        return str(self.target.__name__).removesuffix("Request")

    def map_serializer(self, auto_schema: AutoSchema, direction: str) -> Any:
        schema = model_json_schema(self.target, ref_template="#/components/schemas/{model}", mode="validation")
        for name, definition in schema.pop("$defs", {}).items():
            component = ResolvedComponent(  # type: ignore[no-untyped-call]  # drf-spectacular is untyped
                name=name, type=ResolvedComponent.SCHEMA, object=name, schema=_oas30(definition)
            )
            auto_schema.registry.register_on_missing(component)
        return _oas30(schema)
