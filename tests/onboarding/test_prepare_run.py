"""``manage.py prepare_run`` (what ``make run`` prints): one line for migrations, then a short block."""

from __future__ import annotations

import pytest

from onboarding.demo import DEMO_EMAIL, DEMO_PASSWORD
from tests.support.commands import authenticates, run
from tools.sandbox.selection import SOURCE_TOOLS_OFF

pytestmark = pytest.mark.django_db


@pytest.fixture
def no_bwrap_on_path(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))


def test_it_prints_the_url_login_api_key_and_what_is_on_in_a_few_lines(settings):
    settings.RUN_EXECUTOR = "inprocess"

    lines = run("prepare_run", "--url", "http://127.0.0.1:8123")

    assert lines[0].startswith("Database: ") and lines[0].endswith("up to date")
    block = {line.split()[0]: line for line in lines[1:] if line.strip()}
    assert "http://127.0.0.1:8123/" in block["Open"]
    assert f"{DEMO_EMAIL} / {DEMO_PASSWORD}" in block["Log"]
    assert authenticates(block["API"].split()[-1])
    assert block["Tools"].endswith("source tools are on (bubblewrap sandbox)")
    assert "background runs execute in this server's process" in block["Worker"]
    assert len(lines) <= 10


def test_without_bwrap_it_prints_the_one_line_notice(no_bwrap_on_path):
    lines = run("prepare_run")

    assert [line for line in lines if "bubblewrap" in line] == [f"  Tools     {SOURCE_TOOLS_OFF}"]


def test_with_workers_it_says_where_background_runs_go_without_the_brokers_password(settings):
    settings.RUN_EXECUTOR = "celery"
    settings.CELERY_BROKER_URL = "redis://:s3cret@redis.internal:6379/0"

    worker = next(line for line in run("prepare_run") if line.strip().startswith("Worker"))

    assert "Celery workers (broker redis.internal:6379/0)" in worker
    assert "s3cret" not in worker
