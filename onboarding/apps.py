from __future__ import annotations

from typing import Any

from django.apps import AppConfig


class OnboardingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "onboarding"

    def ready(self) -> None:
        from accounts.signals import organization_created

        organization_created.connect(_give_starter_kit, dispatch_uid="onboarding.starter_kit")


def _give_starter_kit(sender: Any, *, organization: Any, owner: Any, **kwargs: Any) -> None:
    from onboarding.starter import starter_kit_create

    starter_kit_create(organization=organization, created_by=owner)
