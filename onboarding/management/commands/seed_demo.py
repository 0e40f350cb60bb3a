from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from onboarding.demo import DEMO_PASSWORD, demo_seed


class Command(BaseCommand):
    help = (
        "Create or restore the demo organization, user, API key and agent. Safe to run again: "
        "it resets the demo user's password to the documented demo password and prints the same key."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--password", default=DEMO_PASSWORD, help=f"the demo user's password (default: {DEMO_PASSWORD})"
        )
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="where the server listens, for the hints")

    def handle(self, *args: Any, password: str, url: str, **options: Any) -> None:
        # Only the embedded development server makes the demo user an admin: its password is public.
        seed = demo_seed(password=password, staff=settings.DEBUG)

        url = url.rstrip("/")
        tools = ", ".join(
            f"{tool.name}{' (asks for approval)' if tool.default_requires_approval else ''}" for tool in seed.tools
        )
        self.stdout.write(f"Demo organization: {seed.organization.name} ({seed.organization.slug})")
        self.stdout.write(f"Demo agent: {seed.agent.name} [{seed.agent.public_id}], model {seed.agent.model}")
        self.stdout.write(f"Tools: {tools}")
        self.stdout.write(f"Log in at {url}/accounts/login/ with {seed.user.email} / {seed.password}")
        if seed.user.is_superuser:
            self.stdout.write(f"The admin is at {url}/admin/ with the same login.")
        else:
            self.stdout.write(
                self.style.WARNING("DEBUG is off: the demo user is not an admin. Its password is public; change it.")
            )
        self.stdout.write("API key for the demo organization (Authorization: Bearer <key>):")
        self.stdout.write(seed.raw_api_key)
