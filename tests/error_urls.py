"""The site's URLs plus views that fail on purpose, for the error page tests."""

from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.http import HttpRequest, HttpResponse
from django.urls import path

from config.urls import urlpatterns as site_urlpatterns


def bad_request(request: HttpRequest) -> HttpResponse:
    raise SuspiciousOperation("a tampered request")


def forbidden(request: HttpRequest) -> HttpResponse:
    raise PermissionDenied("not for you")


def broken(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug with a secret detail")


urlpatterns = [
    path("fail/400/", bad_request),
    path("fail/403/", forbidden),
    path("fail/500/", broken),
    *site_urlpatterns,
]
