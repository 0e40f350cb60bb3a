import os
from typing import Any

from celery import Celery
from celery.signals import worker_init
from channels.layers import get_channel_layer

from tools.sandbox.selection import announce_sandbox

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("agentserver")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Every task module, named: the run executor, the periodic upkeep, the providers' model refresh and the
# folders' file processing
# (CELERY_BEAT_SCHEDULE in settings).
app.conf.update(imports=["agents.runs.tasks", "agents.maintenance", "providers.tasks", "folders.tasks"])


@worker_init.connect
def _announce_sandbox(**kwargs: Any) -> None:
    """Log at start-up when source tools have no sandbox."""
    announce_sandbox()


@worker_init.connect
def _build_channel_layer(**kwargs: Any) -> None:
    """Build the channel layer before the first run (and before forking the pool's processes):
    its backend's imports took about 200 ms, which the first run's first publish waited for."""
    get_channel_layer()
