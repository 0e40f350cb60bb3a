"""The providers page, for owners and admins: add a provider, test it, see its models and why one is unavailable.

Each view parses a form, calls one service and renders or redirects. Another organization's
provider is a 404 (``providers.selectors.provider_get``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from accounts.decorators import manager_required
from accounts.pages import confirm_delete, or_404
from core.errors import ApplicationError
from providers import selectors, services
from providers.endpoints import base_endpoints
from providers.forms import ProviderForm
from providers.models import ProviderStatus
from providers.services import ProviderCheckFailed

if TYPE_CHECKING:
    from django.http import HttpResponse

    from accounts.http import OrganizationHttpRequest
    from providers.models import Provider


def _provider(request: OrganizationHttpRequest, provider_id: str) -> Provider:
    return or_404(selectors.provider_get, organization=request.organization, provider_id=provider_id)


def _credentials(form: ProviderForm) -> tuple[str, str, str]:
    """The form's key, base URL and API version."""
    data = form.cleaned_data
    return data.get("api_key") or "", data.get("base_url") or "", data.get("api_version") or ""


@manager_required
@require_http_methods(["GET", "POST"])
def provider_list(request: OrganizationHttpRequest) -> HttpResponse:
    """The organization's providers with their models; POST adds one (``action=add``) or only tests it (``check``)."""
    form = ProviderForm(request.POST or None)
    status = 200
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        api_key, base_url, api_version = _credentials(form)
        try:
            if request.POST.get("action") == "check":
                services.provider_check(
                    provider_type=data["provider_type"], api_key=api_key, base_url=base_url, api_version=api_version
                )
                messages.success(request, "The connection works: the provider listed its models.")
            else:
                provider = services.provider_create(
                    organization=request.organization,
                    name=data["name"],
                    provider_type=data["provider_type"],
                    api_key=api_key,
                    base_url=base_url,
                    api_version=api_version,
                )
                if provider.status == ProviderStatus.UNAVAILABLE:
                    messages.warning(request, f"Added {provider.name}, but it is unavailable: {provider.status_reason}")
                else:
                    messages.success(request, f"Added {provider.name}.")
                return redirect("providers:list")
        except ApplicationError as exc:
            form.add_error(
                getattr(exc, "field", None) if getattr(exc, "field", None) in form.fields else None, _text(exc)
            )
            status = 400
    elif request.method == "POST":
        status = 400
    context = {
        "form": form,
        "cards": selectors.providers_for_page(organization=request.organization),
        "server_providers": base_endpoints(),
    }
    return render(request, "providers/list.html", context, status=status)


def _text(exc: ApplicationError) -> str:
    if isinstance(exc, ProviderCheckFailed):
        return f"The connection failed: {exc.reason}"
    return str(exc).removeprefix("INVALID_ARGUMENT: ")


@manager_required
@require_POST
def provider_check(request: OrganizationHttpRequest, provider_id: str) -> HttpResponse:
    provider = _provider(request, provider_id)
    try:
        services.provider_check_stored(provider=provider)
    except ProviderCheckFailed as exc:
        messages.error(request, f"{provider.name}: the connection failed: {exc.reason}")
    else:
        messages.success(request, f"{provider.name}: the connection works.")
    return redirect("providers:list")


@manager_required
@require_POST
def provider_refresh(request: OrganizationHttpRequest, provider_id: str) -> HttpResponse:
    provider = services.provider_refresh(provider=_provider(request, provider_id))
    if provider.status == ProviderStatus.UNAVAILABLE:
        messages.error(request, f"{provider.name} is unavailable: {provider.status_reason}")
    else:
        messages.success(request, f"{provider.name}: models listed again.")
    return redirect("providers:list")


@manager_required
@require_http_methods(["GET", "POST"])
def provider_delete(request: OrganizationHttpRequest, provider_id: str) -> HttpResponse:
    provider = _provider(request, provider_id)
    return confirm_delete(
        request,
        "providers/confirm_delete.html",
        {"provider": provider},
        delete=lambda: services.provider_delete(provider=provider),
        done=f"Deleted {provider.name}; agents on its models need another model.",
        then="providers:list",
    )
