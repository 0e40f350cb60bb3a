"""Models are listed again on demand, when stale (the embedded server's lazy refresh) and by Celery beat."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from config.celery import app
from providers import services
from providers.models import Provider, ProviderModel
from providers.tasks import refresh_providers_task

if TYPE_CHECKING:
    from tests.conftest import Cast
    from tests.fake_llm.server import FakeLLMServer
    from tests.providers.conftest import OrgProviders

pytestmark = pytest.mark.django_db


def _listings(fake_llm: FakeLLMServer) -> int:
    return len([request for request in fake_llm.listing_requests if request.method == "GET"])


def test_a_model_list_asks_only_providers_whose_models_are_stale(
    cast: Cast, org_providers: OrgProviders, fake_llm: FakeLLMServer
) -> None:
    fake_llm.reset()
    services.model_list_fresh(organization=cast.org_a)
    assert _listings(fake_llm) == 0

    Provider.objects.filter(pk=org_providers.openai.pk).update(checked_at=timezone.now() - timedelta(hours=2))
    fake_llm.set_listing("openai", [{"id": "gpt-5", "object": "model"}])
    handles = [model.handle for model in services.model_list_fresh(organization=cast.org_a)]

    assert _listings(fake_llm) == 1
    assert "my-openai/gpt-5" in handles and "my-openai/gpt-4.1-mini" not in handles


def test_the_servers_providers_are_listed_again_when_their_settings_change(
    cast: Cast, fake_llm: FakeLLMServer, no_env_providers
) -> None:
    no_env_providers.OPENAI_BASE_URL = fake_llm.base_url_openai
    no_env_providers.OPENAI_API_KEY = "sk-server-one"
    services.model_list_fresh(organization=cast.org_a)
    no_env_providers.OPENAI_API_KEY = "sk-server-two"

    services.model_list_fresh(organization=cast.org_a)
    no_env_providers.OPENAI_BASE_URL = no_env_providers.OPENAI_API_KEY = ""
    after_removal = services.model_list_fresh(organization=cast.org_a)

    keys = [request.headers["authorization"] for request in fake_llm.listing_requests]
    assert keys == ["Bearer sk-server-one", "Bearer sk-server-two"]
    assert [model.handle for model in after_removal] == ["demo/echo-1"]
    assert not Provider.objects.filter(organization__isnull=True).exists()


def test_celery_beat_refreshes_every_provider_with_the_task_the_worker_imports(
    cast: Cast, org_providers: OrgProviders, fake_llm: FakeLLMServer
) -> None:
    entry = django_settings.CELERY_BEAT_SCHEDULE["refresh-provider-models"]
    assert entry["task"] == refresh_providers_task.name
    assert "providers.tasks" in app.conf.imports
    fake_llm.set_listing("anthropic", [{"type": "model", "id": "claude-opus-4-6", "display_name": "Claude Opus 4.6"}])

    assert refresh_providers_task() == 3

    assert list(ProviderModel.objects.filter(provider=org_providers.anthropic).values_list("name", flat=True)) == [
        "claude-opus-4-6"
    ]
