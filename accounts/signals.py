"""Signals other apps listen to, so ``accounts`` needs to know none of them."""

from __future__ import annotations

from django.dispatch import Signal

organization_created = Signal()
"""Sent inside the transaction that creates an organization with its first owner
(``organization``, ``owner``); ``onboarding`` gives it the starter agent."""
