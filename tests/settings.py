"""Test settings: the real settings, with only what must differ for tests."""

import os

os.environ.setdefault("SECRET_KEY", "test-secret-key-not-for-production-" + "x" * 32)
os.environ.setdefault("FIELD_ENCRYPTION_KEY", "test-field-encryption-key-" + "f" * 32)
# pytest-xdist's workers share one Redis database: each keeps its cache keys (the API keys' access
# generation, throttle counters) apart, and the live servers it starts inherit its prefix.
os.environ.setdefault("CACHE_KEY_PREFIX", "test-" + os.environ.get("PYTEST_XDIST_WORKER", "main"))

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
REST_FRAMEWORK = {
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_THROTTLE_RATES": {"api_key": "100000/minute", "session_user": "100000/minute"},
}
STORAGES = {
    **STORAGES,  # noqa: F405
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
DEMO_TOKEN_DELAY = 0.0
WHITENOISE_AUTOREFRESH = True  # tests serve static files from the finders; no collectstatic
RUN_SWEEP_INTERVAL_SECONDS = 0  # in-process tests sweep when they mean to; live servers set their own
