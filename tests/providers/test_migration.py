"""``ProviderSettings`` rows become providers with nothing lost (providers 0002), and their handles keep working."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from django.db.models import TextField
from django.db.models.functions import Cast as SqlCast

from accounts.crypto import encrypt_secret
from agents.llm.anthropic import AnthropicClient
from agents.llm.openai import OpenAIClient
from agents.llm.registry import get_llm_client
from providers.models import Provider
from tests.support.migrations import latest_schema_afterwards, migrate  # noqa: F401  (the fixture)

if TYPE_CHECKING:
    from pytest_django.fixtures import SettingsWrapper

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("latest_schema_afterwards")]

BEFORE = [("accounts", "0004_approval_expiry"), ("providers", "0001_initial")]
AFTER = [("accounts", "0005_delete_providersettings"), ("providers", "0002_copy_provider_settings")]


def test_the_data_migration_copies_each_rows_key_and_base_url_under_the_name_its_handles_used(
    settings: SettingsWrapper,
) -> None:
    settings.ANTHROPIC_API_KEY = settings.OPENAI_API_KEY = ""
    settings.ANTHROPIC_BASE_URL = settings.OPENAI_BASE_URL = ""
    old = migrate(BEFORE).loader.project_state(BEFORE).apps
    Organization = old.get_model("accounts", "Organization")
    ProviderSettings = old.get_model("accounts", "ProviderSettings")
    acme = Organization.objects.create(name="Acme", slug="acme")
    globex = Organization.objects.create(name="Globex", slug="globex")
    ProviderSettings.objects.create(
        organization=acme, provider="anthropic", api_key_encrypted=encrypt_secret("sk-ant-acme"), base_url=""
    )
    ProviderSettings.objects.create(
        organization=acme,
        provider="openai",
        api_key_encrypted=encrypt_secret("sk-openai-acme"),
        base_url="https://93.184.215.14/v1",
    )
    ProviderSettings.objects.create(organization=globex, provider="openai", api_key_encrypted="", base_url="")

    migrate(AFTER)

    rows = {(row.organization_id, row.name): row for row in Provider.objects.all()}
    assert set(rows) == {(acme.pk, "anthropic"), (acme.pk, "openai")}  # Globex's empty row held nothing
    anthropic, openai = rows[(acme.pk, "anthropic")], rows[(acme.pk, "openai")]
    assert (anthropic.provider_type, anthropic.category, anthropic.api_key, anthropic.base_url) == (
        "anthropic",
        "byok",
        "sk-ant-acme",
        "",
    )
    assert (openai.provider_type, openai.api_key, openai.base_url) == (
        "openai",
        "sk-openai-acme",
        "https://93.184.215.14/v1",
    )
    stored = Provider.objects.filter(pk=openai.pk).values_list(SqlCast("credentials", TextField()), flat=True).get()
    assert "sk-openai-acme" not in stored  # encrypted at rest

    claude, _ = get_llm_client(
        "anthropic/claude-sonnet-4-5-20250929", organization=anthropic.organization, max_attempts=1
    )
    gpt, _ = get_llm_client("openai/gpt-4.1-mini", organization=openai.organization, max_attempts=1)
    assert isinstance(claude, AnthropicClient) and claude.api_key == "sk-ant-acme"
    assert isinstance(gpt, OpenAIClient) and (gpt.api_key, gpt.base_url) == (
        "sk-openai-acme",
        "https://93.184.215.14/v1",
    )
