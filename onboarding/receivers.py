"""What onboarding does when accounts change; connected once, in ``OnboardingConfig.ready``."""

from __future__ import annotations

from typing import Any

from accounts.signals import organization_created
from onboarding.starter import starter_kit_create


def connect_receivers() -> None:
    organization_created.connect(give_starter_kit, dispatch_uid="onboarding.starter_kit")


def give_starter_kit(sender: Any, *, organization: Any, owner: Any, **kwargs: Any) -> None:
    """Every new organization starts with the starter agent, in the transaction that creates it."""
    starter_kit_create(organization=organization, created_by=owner)
