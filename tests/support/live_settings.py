"""Settings of the server and worker processes that the chat's live tests start.

Production settings, plus what those processes need to be tested from outside:
static files served from the source folders (no collectstatic), a fast password
hasher, and through the environment a short turn lease, a Celery queue and a
channel-layer prefix of their own (so concurrent test runs on one Redis never
see each other's tasks or events).
"""

from config.settings import *  # noqa: F403
from config.settings import CHANNEL_LAYERS, REDIS_URL, STORAGES, env

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

AGENT_TURN_LOCK_SECONDS = env.float("AGENT_TURN_LOCK_SECONDS", default=60)
RUN_STALE_SECONDS = env.float("RUN_STALE_SECONDS", default=0) or None
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_TASK_DEFAULT_QUEUE", default="celery")
if REDIS_URL:
    CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = env.str("CHANNEL_LAYER_PREFIX", default="asgi")
