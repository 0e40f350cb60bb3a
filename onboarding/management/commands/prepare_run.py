"""``manage.py prepare_run``: what ``make run`` does before serving, told in a few lines.

Migrations are applied quietly and summarised in one line; then the demo is seeded and a
short block says where to go, how to log in, the API key, and whether source tools and a
worker are on.
"""

from __future__ import annotations

import io
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from onboarding.demo import DEMO_PASSWORD, demo_seed
from tools.sandbox.selection import source_tools_notice


def pending_migrations() -> int:
    executor = MigrationExecutor(connection)
    return len(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def worker_line() -> str:
    if settings.RUN_EXECUTOR == "celery":
        return f"background runs go to Celery workers (broker {settings.CELERY_BROKER_URL.split('@')[-1]})"
    return "none needed: background runs execute in this server's process"


class Command(BaseCommand):
    help = "Apply migrations and seed the demo quietly, then print the URL, login, API key and what is on."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="where the server will listen")

    def handle(self, *args: Any, url: str, **options: Any) -> None:
        pending = pending_migrations()
        call_command("migrate", interactive=False, verbosity=0, stdout=io.StringIO())
        self.stdout.write(f"Database: {pending} migration{'' if pending == 1 else 's'} applied, up to date")
        seed = demo_seed(password=DEMO_PASSWORD, staff=settings.DEBUG)
        url = url.rstrip("/")
        admin = f"  (also the admin, {url}/admin/)" if seed.user.is_superuser else ""
        notice = source_tools_notice() or "source tools are on (bubblewrap sandbox)"
        for line in (
            "",
            f"  Open      {url}/",
            f"  Log in    {seed.user.email} / {seed.password}{admin}",
            f"  API key   {seed.raw_api_key}",
            f'  Try       the {seed.agent.name}: "call roll_dice with num_sides=6"',
            f"  Tools     {notice}",
            f"  Worker    {worker_line()}",
            "",
        ):
            self.stdout.write(line)
