"""What the organization's pages share (agents, tools, providers, MCP servers, archival memory)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render

from core.errors import NotFound

if TYPE_CHECKING:
    from collections.abc import Callable

    from django import forms
    from django.http import HttpRequest, HttpResponse


P = ParamSpec("P")
T = TypeVar("T")


def or_404(find: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``find(...)``, an organization-scoped lookup, for a page: its ``NotFound`` is Django's ``Http404``."""
    try:
        return find(*args, **kwargs)
    except NotFound as exc:
        raise Http404(str(exc)) from None


def search_query(search: forms.Form) -> str:
    """What a search box (a form with a ``q`` field, bound to ``request.GET``) asks for; empty when invalid."""
    return search.cleaned_data["q"].strip() if search.is_valid() else ""


def confirm_delete(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    *,
    delete: Callable[[], object],
    done: str,
    then: str,
) -> HttpResponse:
    """GET shows the confirmation page; POST deletes, says ``done`` and redirects to the URL named ``then``."""
    if request.method == "POST":
        delete()
        messages.success(request, done)
        return redirect(then)
    return render(request, template, context)
