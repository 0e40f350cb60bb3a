"""The product's CSRF failure page; 400, 403, 404 and 500 use ``templates/<code>.html`` via Django's handlers."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseForbidden
from django.middleware.csrf import REASON_NO_CSRF_COOKIE
from django.template.loader import render_to_string


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponseForbidden:
    """``CSRF_FAILURE_VIEW``: the form-expired page in the site's layout (the reason stays in the log)."""
    context = {"no_cookie": reason == REASON_NO_CSRF_COOKIE}
    return HttpResponseForbidden(render_to_string("403_csrf.html", context, request=request))
