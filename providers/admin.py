"""The admin of organizations' providers; the key is write-only, as in the providers page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin

from accounts.admin_scoping import OrgScopedAdminMixin
from core.errors import ApplicationError
from providers.models import Provider, ProviderModel
from providers.services import provider_name_checked

if TYPE_CHECKING:
    from django.db.models import QuerySet
    from django.http import HttpRequest


class ProviderForm(forms.ModelForm):
    api_key = forms.CharField(
        label="API key",
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text=(
            "Stored encrypted and never shown again. Leave empty to keep the current key; "
            "changing the base URL removes it unless a new key is given."
        ),
    )
    clear_api_key = forms.BooleanField(label="Remove the stored key", required=False)

    class Meta:
        model = Provider
        fields = ("organization", "name", "provider_type", "base_url", "api_version", "region")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        if "organization" in self.fields:
            self.fields["organization"].required = True  # a row without one is a server provider

    def clean(self) -> dict[str, Any]:
        """A new provider's name follows the API's rules: no '/', no space, not a server provider's, unique."""
        cleaned: dict[str, Any] = super().clean() or {}
        organization, name = cleaned.get("organization"), cleaned.get("name")
        if self.instance._state.adding and organization is not None and name:
            try:
                cleaned["name"] = provider_name_checked(organization, name)
            except ApplicationError as exc:
                self.add_error("name", str(exc).removeprefix("INVALID_ARGUMENT: "))
        return cleaned

    def save(self, commit: bool = True) -> Provider:
        instance: Provider = super().save(commit=False)
        if self.cleaned_data.get("clear_api_key"):
            instance.api_key = ""
        elif self.cleaned_data.get("api_key"):
            instance.api_key = self.cleaned_data["api_key"]
        if commit:
            instance.save()
        return instance


class ProviderModelInline(admin.TabularInline):
    model = ProviderModel
    extra = 0
    can_delete = False
    fields = ("name", "kind", "context_window", "max_output_tokens", "embedding_dim", "limits_source")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Provider)
class ProviderAdmin(OrgScopedAdminMixin, admin.ModelAdmin):
    form = ProviderForm
    inlines = (ProviderModelInline,)
    list_display = ("name", "organization", "provider_type", "has_key", "base_url", "status", "last_synced")
    list_filter = ("provider_type", "status", ("organization", admin.RelatedOnlyFieldListFilter))
    search_fields = ("name", "organization__name", "organization__slug", "base_url")
    list_select_related = ("organization",)
    readonly_fields = ("status", "status_reason", "checked_at", "last_synced")

    def get_readonly_fields(self, request: HttpRequest, obj: Provider | None = None) -> tuple[str, ...]:
        """A saved provider keeps its name and type, as in Letta (its ``PATCH`` changes neither): its
        models' handles (``name/model``) are in agents, and a rename would leave them naming nothing."""
        readonly = tuple(super().get_readonly_fields(request, obj))
        return readonly if obj is None else (*readonly, "name", "provider_type")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Provider]:
        """Organizations' providers only: the server's come from its settings."""
        return super().get_queryset(request).filter(organization__isnull=False)

    @admin.display(description="key stored", boolean=True)
    def has_key(self, obj: Provider) -> bool:
        return obj.has_api_key
