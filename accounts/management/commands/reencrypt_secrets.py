from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from accounts.services import secrets_reencrypt


class Command(BaseCommand):
    help = (
        "Encrypt every stored secret (provider API keys) again with the first FIELD_ENCRYPTION_KEY, "
        "after a new key was put first. Then the older keys can be removed."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            count = secrets_reencrypt()
        except ValueError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Re-encrypted {count} secret(s) with the first FIELD_ENCRYPTION_KEY.")
