import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("agentserver")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.conf.update(
    imports=["agents.sweeper"],
    beat_schedule={"sweep-stale-runs": {"task": "agents.sweeper.sweep_stale_runs_task", "schedule": 30.0}},
)
