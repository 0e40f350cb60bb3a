"""The periodic refresh of every provider's models (``CELERY_BEAT_SCHEDULE`` in the settings).

The embedded server has no beat: a model list refreshes stale providers itself
(``providers.services.providers_refresh_stale``).
"""

from __future__ import annotations

from celery import shared_task

from providers.services import providers_refresh_all


@shared_task(name="providers.tasks.refresh_providers_task", ignore_result=True)
def refresh_providers_task() -> int:
    return providers_refresh_all()
