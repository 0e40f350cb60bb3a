"""Model providers and the models discovered from them.

A ``Provider`` row is either an organization's own (``byok``: a name, a type, a key
encrypted at rest, a base URL) or one of the server's environment providers (``base``:
no organization, no stored key; ``providers.base`` reads its configuration from the
settings on every use, and the row only holds what discovery found). Handles are
``<provider name>/<model name>``.

Discovered models are rows too (``ProviderModel``), not cache entries: the Celery beat
refresh runs in a worker process, and the embedded server's cache is per process, so only
the database is seen by every process; a listing is then one query, and survives restarts.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from accounts.fields import EncryptedJSONField
from accounts.models import Organization
from accounts.scoping import OrgScopedQuerySet, PublicIdModel
from core.egress import UnsafeProviderURL, check_provider_url
from providers.types import ProviderCategory, ProviderType


class ProviderStatus(models.TextChoices):
    UNKNOWN = "unknown", "Not checked yet"
    AVAILABLE = "available", "Available"
    UNAVAILABLE = "unavailable", "Unavailable"


class ProviderQuerySet(OrgScopedQuerySet):
    def byok(self) -> ProviderQuerySet:
        return self.filter(category=ProviderCategory.BYOK)

    def base(self) -> ProviderQuerySet:
        return self.filter(category=ProviderCategory.BASE, organization__isnull=True)


class Provider(PublicIdModel):
    """A provider of models: an organization's own, or (no organization) one of the server's."""

    id_prefix = "provider"

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, null=True, blank=True, related_name="providers"
    )
    name = models.CharField(max_length=100, help_text="The first part of its models' handles (name/model).")
    provider_type = models.CharField("type", max_length=30, choices=ProviderType.choices)
    category = models.CharField(max_length=10, choices=ProviderCategory.choices, default=ProviderCategory.BYOK)
    base_url = models.CharField("base URL", max_length=500, blank=True)
    api_version = models.CharField("API version", max_length=40, blank=True, help_text="Azure OpenAI only.")
    region = models.CharField(max_length=60, blank=True)
    # ``{"api_key": "..."}``, encrypted at rest; never shown (``manage.py reencrypt_secrets`` rotates it).
    credentials = EncryptedJSONField(default=dict, blank=True, editable=False)
    # Base providers: a digest of the environment configuration the models were discovered with.
    fingerprint = models.CharField(max_length=64, blank=True, editable=False)
    status = models.CharField(max_length=12, choices=ProviderStatus.choices, default=ProviderStatus.UNKNOWN)
    status_reason = models.TextField(blank=True, help_text="Why the provider is unavailable.")
    checked_at = models.DateTimeField(null=True, blank=True, help_text="The last attempt to list its models.")
    last_synced = models.DateTimeField(null=True, blank=True, help_text="The last successful listing.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProviderQuerySet.as_manager()

    _key_set = False  # a new key was set since loading: a URL change then keeps it

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["organization", "name"], name="unique_provider_name_per_org"),
            models.UniqueConstraint(
                fields=["name"], condition=Q(organization__isnull=True), name="unique_base_provider_name"
            ),
        ]

    def __str__(self) -> str:
        owner = self.organization or "the server"
        return f"{self.name} ({self.get_provider_type_display()}) for {owner}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """A key stored for one base URL is never sent to another: changing the URL drops it,
        unless a new key is set in the same change."""
        saved_url = getattr(self, "_saved_base_url", None)
        if not self._state.adding and saved_url is not None and saved_url != self.base_url and not self._key_set:
            self.credentials = {}
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = {*kwargs["update_fields"], "credentials"}
        super().save(*args, **kwargs)
        self._saved_base_url = self.base_url
        self._key_set = False

    @classmethod
    def from_db(cls, db: str | None, field_names: Any, values: Any, **kwargs: Any) -> Provider:
        instance: Provider = super().from_db(db, field_names, values, **kwargs)
        instance._saved_base_url = instance.__dict__.get("base_url") or ""
        return instance

    def clean(self) -> None:
        """An organization's base URL may not point at private, loopback or link-local addresses."""
        super().clean()
        if self.base_url and self.category == ProviderCategory.BYOK:
            try:
                check_provider_url(self.base_url)
            except UnsafeProviderURL as exc:
                raise ValidationError({"base_url": str(exc)}) from exc

    @property
    def api_key(self) -> str:
        return str((self.credentials or {}).get("api_key") or "")

    @api_key.setter
    def api_key(self, value: str) -> None:
        self.credentials = {"api_key": value} if value else {}
        self._key_set = True

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key)


class ModelKind(models.TextChoices):
    LLM = "llm", "Chat"
    EMBEDDING = "embedding", "Embedding"


class LimitsSource(models.TextChoices):
    PROVIDER = "provider", "reported by the provider"
    CATALOG = "models.dev", "models.dev catalogue"
    DEFAULT = "default", "default (unknown model)"


class ProviderModel(models.Model):
    """One model a provider listed the last time it answered."""

    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="models")
    name = models.CharField(max_length=300, help_text="The model's id at the provider: the handle's second part.")
    kind = models.CharField(max_length=10, choices=ModelKind.choices, default=ModelKind.LLM)
    display_name = models.CharField(max_length=300, blank=True)
    context_window = models.PositiveIntegerField()
    max_output_tokens = models.PositiveIntegerField(null=True, blank=True)
    embedding_dim = models.PositiveIntegerField(null=True, blank=True)
    limits_source = models.CharField(max_length=12, choices=LimitsSource.choices, default=LimitsSource.DEFAULT)
    discovered_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["provider", "kind", "name"], name="unique_model_per_provider"),
        ]

    def __str__(self) -> str:
        return f"{self.provider.name}/{self.name}"

    @property
    def handle(self) -> str:
        return f"{self.provider.name}/{self.name}"

    @property
    def context_label(self) -> str:
        return f"{self.context_window:,} tokens"

    @property
    def output_label(self) -> str:
        """What a page shows for its output: an embedding's dimensions, a chat model's output limit."""
        if self.kind == ModelKind.EMBEDDING:
            return f"{self.embedding_dim:,} dimensions" if self.embedding_dim else "unknown"
        return f"up to {self.max_output_tokens:,} tokens" if self.max_output_tokens else "unknown"
