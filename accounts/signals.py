"""Signals other apps listen to, so ``accounts`` needs to know none of them."""

from __future__ import annotations

from django.dispatch import Signal

organization_created = Signal()
"""Sent inside the transaction that creates an organization with its first owner
(``organization``, ``owner``); ``onboarding`` gives it the starter agent."""

api_keys_updated = Signal()
"""Sent after a bulk ``ApiKey.objects.update`` that changed more than ``last_used_at`` (no
``post_save`` is sent for those rows); ``accounts.api_key_cache`` forgets what it knew."""
