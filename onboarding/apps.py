from __future__ import annotations

from django.apps import AppConfig


class OnboardingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "onboarding"

    def ready(self) -> None:
        from onboarding.receivers import connect_receivers

        connect_receivers()
