"""The settings module switches between the embedded default and Postgres/Redis by environment alone."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.support.settings_probe import PROJECT, run_probe

PROBE = """
import json
from config import settings as s
print(json.dumps({
    "engine": s.DATABASES["default"]["ENGINE"],
    "name": str(s.DATABASES["default"]["NAME"]),
    "layer": s.CHANNEL_LAYERS["default"]["BACKEND"],
    "cache": s.CACHES["default"]["BACKEND"],
    "executor": s.RUN_EXECUTOR,
    "broker": s.CELERY_BROKER_URL,
    "debug": s.DEBUG,
}))
"""
SETTINGS_VARIABLES = (
    "DATABASE_URL",
    "REDIS_URL",
    "RUN_EXECUTOR",
    "CELERY_BROKER_URL",
    "DEBUG",
    "SECRET_KEY",
    "FIELD_ENCRYPTION_KEY",
)


def load_settings(**env: str) -> subprocess.CompletedProcess[str]:
    return run_probe(PROBE, env, unset=SETTINGS_VARIABLES)


def probe(**env: str) -> dict:
    result = load_settings(**env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_it_needs_no_services_by_default():
    settings = probe(DEBUG="1")

    assert settings["engine"] == "django.db.backends.sqlite3"
    assert settings["name"] == str(PROJECT / "db.sqlite3")
    assert settings["layer"] == "channels.layers.InMemoryChannelLayer"
    assert settings["cache"] == "django.core.cache.backends.locmem.LocMemCache"
    assert settings["executor"] == "inprocess"
    assert settings["broker"] == "memory://"


def test_it_switches_to_postgres_and_redis_from_the_environment():
    settings = probe(
        SECRET_KEY="x" * 50,
        FIELD_ENCRYPTION_KEY="y" * 50,
        DATABASE_URL="postgres://agents:secret@db.internal:5432/agents",
        REDIS_URL="redis://cache.internal:6379/0",
    )

    assert settings["engine"] == "django.db.backends.postgresql"
    assert settings["name"] == "agents"
    assert settings["layer"] == "channels_redis.core.RedisChannelLayer"
    assert settings["cache"] == "django.core.cache.backends.redis.RedisCache"
    assert settings["executor"] == "celery"
    assert settings["broker"] == "redis://cache.internal:6379/0"
    assert settings["debug"] is False


@pytest.mark.parametrize("debug", ["", "0"])
def test_it_refuses_to_start_without_a_secret_key_when_debug_is_off(debug):
    env = {"DEBUG": debug} if debug else {}

    result = load_settings(**env)

    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr
