from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_email, validate_slug

from accounts.services import api_key_provision


class Command(BaseCommand):
    help = (
        "Issue an API key for a user in an organization, creating the organization, the user "
        "(without a password) and an owner membership when they do not exist. "
        "The key is printed alone on the last line."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", required=True, help="organization slug")
        parser.add_argument("--email", required=True, help="the key's user")
        parser.add_argument("--name", required=True, help="a label for the key")

    def handle(self, *args: Any, org: str, email: str, name: str, **options: Any) -> None:
        try:
            validate_slug(org)
            validate_email(email)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        if not name.strip():
            raise CommandError("--name must not be empty.")

        provisioned = api_key_provision(organization_slug=org, email=email, name=name.strip())

        key = provisioned.api_key
        if provisioned.organization_created:
            self.stdout.write(f"Created organization {key.organization.slug}.")
        if provisioned.user_created:
            self.stdout.write(f"Created user {key.created_by} (no password; set one with `manage.py changepassword`).")
        if provisioned.membership_created:
            self.stdout.write(f"Made {key.created_by} an owner of {key.organization.slug}.")
        self.stdout.write(f"API key {key.name!r} ({key.prefix}…) for {key.organization.slug}; it is shown only now:")
        self.stdout.write(provisioned.raw_key)
