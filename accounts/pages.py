"""What the organization's list and delete pages share (agents, tools, archival memory)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.shortcuts import redirect, render

if TYPE_CHECKING:
    from collections.abc import Callable

    from django import forms
    from django.http import HttpRequest, HttpResponse


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
