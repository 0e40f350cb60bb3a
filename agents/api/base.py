"""The base of every organization-owned API view: it owns the organization and object lookups.

Views never query models themselves: they get the request's organization from
``self.organization`` and objects through ``get_agent`` / ``get_tool``, which go
through the organization-scoped selectors, so another organization's id is a 404.
Subclasses may not redefine these (checked in ``__init_subclass__``), nor the
generic ``get_object`` / ``get_queryset`` hooks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from asgiref.sync import sync_to_async
from django.http import HttpResponse, HttpResponseBase
from drf_spectacular.utils import OpenApiParameter
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import OrganizationRequestMixin
from agents import selectors
from agents.errors import ValidationFailed
from tools import selectors as tool_selectors

if TYPE_CHECKING:
    from django.http import HttpRequest
    from rest_framework.request import Request

    from agents.models import Agent
    from tools.models import Tool

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}
UNSTORABLE_TEXT = "Text may not contain NUL characters or unpaired surrogates."


def _query_error(name: str, message: str, kind: str) -> ValidationFailed:
    return ValidationFailed([{"loc": ["query", name], "msg": message, "type": kind}])


def _storable(text: str) -> bool:
    """Whether Postgres can store ``text`` (as text or inside jsonb): no NUL, valid UTF-8."""
    if "\x00" in text:
        return False
    try:
        text.encode()
    except UnicodeEncodeError:  # an unpaired surrogate, sent as a JSON ``\ud800`` escape
        return False
    return True


def unstorable_text(value: Any, loc: list[str | int]) -> list[dict[str, Any]]:
    """FastAPI-style errors for every string (key or value) in ``value`` that could not be stored."""
    if isinstance(value, str):
        return [] if _storable(value) else [{"loc": loc, "msg": UNSTORABLE_TEXT, "type": "string_unicode"}]
    if isinstance(value, dict):
        errors = [error for key in value if isinstance(key, str) for error in unstorable_text(key, [*loc, key])]
        return errors + [error for key, item in value.items() for error in unstorable_text(item, [*loc, key])]
    if isinstance(value, list):
        return [error for index, item in enumerate(value) for error in unstorable_text(item, [*loc, index])]
    return []


@dataclass(frozen=True)
class QueryFilter:
    """A list route's filter, said once: its OpenAPI parameter and how the view reads it."""

    name: str
    kind: Literal["text", "list", "flag"]  # one text, repeated or comma-separated texts, a boolean
    description: str

    def parameter(self) -> OpenApiParameter:
        if self.kind == "flag":
            return OpenApiParameter(self.name, bool, description=self.description)
        return OpenApiParameter(self.name, str, many=self.kind == "list", description=self.description)


def filter_parameters(filters: Sequence[QueryFilter]) -> list[OpenApiParameter]:
    return [query_filter.parameter() for query_filter in filters]


class OrgScopedAPIView(OrganizationRequestMixin, APIView):
    _sealed: ClassVar[tuple[str, ...]] = (
        "organization",
        "acting_user",
        "get_agent",
        "get_tool",
        "get_object",
        "get_queryset",
    )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        overridden = [name for name in cls._sealed if name in cls.__dict__]
        if overridden:
            raise TypeError(f"{cls.__name__} may not override {', '.join(overridden)}: lookups stay org-scoped.")

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """After authentication: refuse input the database cannot store (422) before any view code runs.

        Postgres rejects NUL characters in text and in jsonb, and unpaired surrogates
        in any string; letting them through would make a 500 of a bad request.
        """
        super().initial(request, *args, **kwargs)
        errors = [error for name, value in kwargs.items() for error in unstorable_text(value, ["path", name])]
        for name, values in request.query_params.lists():
            errors += [error for value in values for error in unstorable_text(value, ["query", name])]
        errors += unstorable_text(request.data, ["body"])
        if errors:
            raise ValidationFailed(errors)

    def get_agent(self, agent_id: str, *, with_tools: bool = True) -> Agent:
        """The organization's agent ``agent_id``; ``with_tools=False`` skips prefetching its tools and blocks."""
        return selectors.agent_get(organization=self.organization, agent_id=agent_id, with_tools=with_tools)

    def get_tool(self, tool_id: str) -> Tool:
        return tool_selectors.tool_get(organization=self.organization, tool_id=tool_id)

    # --- query parameters, validated like FastAPI's (422 naming the parameter) -----------

    def query_list(self, name: str) -> list[str]:
        """Repeated (``?tags=a&tags=b``) or comma-separated (``?tags=a,b``) values."""
        values = self.request.query_params.getlist(name)
        return [item.strip() for value in values for item in value.split(",") if item.strip()]

    def query_int(self, name: str, *, default: int, minimum: int = 1, maximum: int = 1000) -> int:
        raw = self.query_str(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise _query_error(name, "Input should be a valid integer", "int_parsing") from None
        if not minimum <= value <= maximum:
            raise _query_error(name, f"Input should be between {minimum} and {maximum}", "value_error")
        return value

    def query_bool(self, name: str, *, default: bool | None = None, required: bool = False) -> bool | None:
        raw = self.query_str(name)
        if raw is None and required:
            raise _query_error(name, "Field required", "missing")
        if raw is None:
            return default
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise _query_error(name, "Input should be a valid boolean", "bool_parsing")

    def query_choice(self, name: str, choices: tuple[str, ...], *, default: str) -> str:
        raw = self.query_str(name)
        if raw is None:
            return default
        if raw not in choices:
            raise _query_error(name, f"Input should be one of {', '.join(repr(c) for c in choices)}", "enum")
        return raw

    def query_filters(self, filters: Sequence[QueryFilter]) -> dict[str, Any]:
        """The request's value of each of ``filters``: a text or ``None``, a list, a flag (false when absent)."""
        values: dict[str, Any] = {}
        for query_filter in filters:
            name = query_filter.name
            if query_filter.kind == "flag":
                values[name] = bool(self.query_bool(name, default=False))
            else:
                values[name] = self.query_list(name) if query_filter.kind == "list" else self.query_str(name)
        return values

    def cursor(self, *, limit: int, order: str, order_by: tuple[str, ...] = ("created_at",)) -> dict[str, Any]:
        """``after``, ``before``, ``limit`` and ``order`` of a list route (``order_by`` is validated, one key)."""
        self.query_choice("order_by", order_by, default=order_by[0])
        return {
            "after": self.query_str("after"),
            "before": self.query_str("before"),
            "limit": self.query_int("limit", default=limit),
            "order": self.query_choice("order", ("asc", "desc"), default=order),
        }

    def body_or_query_bool(self, name: str, *, default: bool | None = None, required: bool = False) -> bool | None:
        """A flag 1.x sends in the JSON body and 0.1.324 in the query string; the body wins."""
        data = self.request.data
        if isinstance(data, dict) and data.get(name) is not None:
            if not isinstance(data[name], bool):
                raise ValidationFailed(
                    [{"loc": ["body", name], "msg": "Input should be a valid boolean", "type": "bool_type"}]
                )
            return bool(data[name])
        return self.query_bool(name, default=default, required=required)


Later = Callable[[], Awaitable[HttpResponseBase]]
"""What an ``OrgScopedAsyncAPIView`` handler returns for work that runs on the event loop."""


class OrgScopedAsyncAPIView(OrgScopedAPIView):
    """An async view with DRF's whole request cycle, entering the event loop's work once.

    ``dispatch`` runs DRF's own cycle (parsing, authentication, permissions, throttling,
    ``initial``, the handler, the exception handler) in one hop to the request's thread,
    as a sync view would. A handler may return a response, or a ``Later``: a coroutine
    function the view then awaits on the event loop (a turn executes there, with no
    ``async_to_sync`` round trip). Its response is finalized there and, for a DRF
    ``Response``, rendered there too; an exception it raises goes through the same
    exception handler as any other, back in the request's thread.
    """

    view_is_async = True

    async def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:  # type: ignore[override]
        prepared = await sync_to_async(self._dispatch_in_thread)(request, *args, **kwargs)
        if isinstance(prepared, HttpResponseBase):
            return prepared
        try:
            response = await prepared()
        except Exception as exc:
            return await sync_to_async(self._error_response)(exc)
        finalized = self.finalize_response(self.request, response, *args, **kwargs)  # type: ignore[arg-type]
        self.response = finalized
        return _rendered(finalized)

    def _dispatch_in_thread(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase | Later:
        """``APIView.dispatch``, except that a handler's ``Later`` is handed back unfinished."""
        self.args = args
        self.kwargs = kwargs
        drf_request = self.initialize_request(request, *args, **kwargs)
        self.request = drf_request
        self.headers = self.default_response_headers
        try:
            self.initial(drf_request, *args, **kwargs)
            method = drf_request.method.lower() if drf_request.method else ""
            handler = getattr(self, method, self.http_method_not_allowed)
            if method not in self.http_method_names:
                handler = self.http_method_not_allowed
            response = handler(drf_request, *args, **kwargs)
        except Exception as exc:
            response = self.handle_exception(exc)
        if not isinstance(response, HttpResponseBase):
            return response  # type: ignore[no-any-return]
        self.response = self.finalize_response(drf_request, response, *args, **kwargs)  # type: ignore[arg-type]
        return self.response

    def _error_response(self, exc: Exception) -> HttpResponseBase:
        response = self.finalize_response(self.request, self.handle_exception(exc), *self.args, **self.kwargs)
        self.response = response
        return response


def _rendered(response: HttpResponseBase) -> HttpResponseBase:
    """A DRF ``Response`` rendered now, as a plain ``HttpResponse``: Django would otherwise hop to a
    thread just to render it. Anything else (a stream) is returned as it is."""
    if not isinstance(response, Response):
        return response
    response.render()
    plain = HttpResponse(response.content, status=response.status_code)
    plain.headers = response.headers
    plain.cookies = response.cookies
    return plain
