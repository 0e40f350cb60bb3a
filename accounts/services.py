"""Writes for accounts: sign-up, organizations, invites, memberships and API keys.

Every function is keyword-only. Functions that act for a person take the
``actor`` membership and check what that role may do; views only call them and
turn an ``AccountsError`` into a message. Rules about roles:

- owners and admins manage the organization (invites, members, API keys);
- only owners grant the owner role or change or remove an owner;
- an organization always keeps at least one owner.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.apps import apps
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.fields import EncryptedJSONField
from accounts.models import ApiKey, Invite, Membership, Organization, Role, User
from accounts.signals import organization_created
from core.errors import ApplicationError

if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime


class AccountsError(ApplicationError):
    """A request that the rules refuse; ``message`` is safe to show to the person who asked."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotAllowed(AccountsError):
    status_code = 403


class LastOwnerError(AccountsError):
    status_code = 409


class InviteUnavailable(AccountsError):
    status_code = 410


class AlreadyMember(AccountsError):
    status_code = 409


class EmailTaken(AccountsError):
    status_code = 409


def _require_manager(actor: Membership, organization: Organization) -> None:
    if actor.organization_id != organization.pk or not actor.can_manage:
        raise NotAllowed("Only owners and admins of this organization can do that.")


def may_manage_member(*, actor: Membership, membership: Membership) -> bool:
    """Whether ``actor`` may change ``membership``'s role or remove it (the last-owner rule aside)."""
    if actor.organization_id != membership.organization_id or not actor.can_manage:
        return False
    return actor.role == Role.OWNER or membership.role != Role.OWNER


def _require_may_touch(actor: Membership, *, current_role: str, new_role: str | None = None) -> None:
    """Admins manage members and admins; owners are managed by owners only."""
    if actor.role == Role.OWNER:
        return
    if current_role == Role.OWNER or new_role == Role.OWNER:
        raise NotAllowed("Only an owner can grant, change or remove the owner role.")


def require_may_grant(*, actor: Membership, organization: Organization, role: str) -> None:
    """``actor`` may give someone ``role`` in ``organization`` (a new member or an invite); ``NotAllowed`` if not."""
    _require_manager(actor, organization)
    _require_may_touch(actor, current_role=Role.MEMBER, new_role=role)


def membership_remove_as_operator(*, membership: Membership) -> None:
    """A superuser's removal: no role limits, but the organization keeps an owner."""
    with transaction.atomic():
        owners = _lock_owners(membership.organization)
        current = Membership.objects.select_for_update().get(pk=membership.pk)
        if current.role == Role.OWNER and _is_last_owner(current, owners):
            raise LastOwnerError("An organization needs at least one owner; make someone else an owner first.")
        current.delete()


def _lock_owners(organization: Organization) -> list[Membership]:
    """Lock the organization's owner rows so two demotions cannot race past the last-owner rule."""
    return list(Membership.objects.select_for_update().filter(organization=organization, role=Role.OWNER))


def organization_create_with_owner(*, name: str, owner: User, slug: str | None = None) -> Organization:
    """Create an organization and make ``owner`` its first owner; ``organization_created`` is sent
    inside the transaction, so what its receivers add (the starter agent) commits with it or not at all."""
    with transaction.atomic():
        organization = Organization.objects.create(name=name, slug=slug or Organization.unique_slug(name))
        Membership.objects.create(user=owner, organization=organization, role=Role.OWNER)
        organization_created.send(sender=Organization, organization=organization, owner=owner)
    return organization


def user_create(*, email: str, password: str | None, name: str = "") -> User:
    """Create a login; ``EmailTaken`` when the address already has one (case-insensitive)."""
    normalized = User.objects.normalize_email(email).lower()
    if User.objects.filter(email__iexact=normalized).exists():
        raise EmailTaken("An account with this email address already exists.")
    try:
        with transaction.atomic():
            return User.objects.create_user(normalized, password, name=name)
    except IntegrityError:
        raise EmailTaken("An account with this email address already exists.") from None


def user_signup(*, email: str, name: str, password: str | None, organization_name: str = "") -> User:
    """Create a user and, when ``organization_name`` is given, an organization they own.

    People who sign up to accept an invite join through the invite instead.
    """
    with transaction.atomic():
        user = user_create(email=email, password=password, name=name)
        if organization_name:
            organization_create_with_owner(name=organization_name, owner=user)
    return user


def invite_create(*, actor: Membership, email: str = "", role: str = Role.MEMBER) -> Invite:
    """Create a pending invite to the actor's organization; its token is the link's secret."""
    organization = actor.organization
    _require_manager(actor, organization)
    _require_may_touch(actor, current_role=Role.MEMBER, new_role=role)
    return Invite.objects.create(organization=organization, email=email, role=role, created_by=actor.user)


def invite_revoke(*, actor: Membership, invite: Invite) -> Invite:
    """Revoke a pending invite; revoking twice changes nothing."""
    _require_manager(actor, invite.organization)
    if invite.accepted_at is None and invite.revoked_at is None:
        invite.revoked_at = timezone.now()
        invite.save(update_fields=["revoked_at"])
    return invite


def invite_accept(*, invite: Invite, user: User) -> Membership:
    """Use ``invite`` to make ``user`` a member with the invite's role.

    An invite works once: the row is locked, checked still pending and marked
    accepted in one transaction. Someone who is already a member gets
    ``AlreadyMember`` and the invite stays usable for the person it was meant for.
    """
    with transaction.atomic():
        locked = Invite.objects.select_for_update().select_related("organization").get(pk=invite.pk)
        if locked.revoked_at is not None or locked.accepted_at is not None:
            raise InviteUnavailable("This invite has already been used or was revoked.")
        if locked.is_expired:
            raise InviteUnavailable("This invite has expired; ask for a new one.")
        if not locked.is_for(user):
            raise InviteUnavailable("This invite was sent to another email address; log in with that account.")
        if Membership.objects.filter(user=user, organization=locked.organization).exists():
            raise AlreadyMember(f"You are already a member of {locked.organization}.")
        membership = Membership.objects.create(user=user, organization=locked.organization, role=locked.role)
        locked.accepted_by = user
        locked.accepted_at = timezone.now()
        locked.save(update_fields=["accepted_by", "accepted_at"])
    invite.accepted_by, invite.accepted_at = locked.accepted_by, locked.accepted_at
    return membership


def membership_set_role(*, actor: Membership, membership: Membership, role: str) -> Membership:
    """Change a member's role, keeping at least one owner."""
    if role not in Role.values:
        raise AccountsError("Unknown role.")
    _require_manager(actor, membership.organization)
    with transaction.atomic():
        owners = _lock_owners(membership.organization)
        current = Membership.objects.select_for_update().get(pk=membership.pk)
        _require_may_touch(actor, current_role=current.role, new_role=role)
        if current.role == Role.OWNER and role != Role.OWNER and _is_last_owner(current, owners):
            raise LastOwnerError("An organization needs at least one owner; make someone else an owner first.")
        current.role = role
        current.save(update_fields=["role"])
    membership.role = role
    return membership


def membership_remove(*, actor: Membership, membership: Membership) -> None:
    """Remove a member (or let someone leave), keeping at least one owner."""
    leaving = actor.pk == membership.pk
    if not leaving:
        _require_manager(actor, membership.organization)
    with transaction.atomic():
        owners = _lock_owners(membership.organization)
        current = Membership.objects.select_for_update().get(pk=membership.pk)
        if not leaving:
            _require_may_touch(actor, current_role=current.role)
        if current.role == Role.OWNER and _is_last_owner(current, owners):
            raise LastOwnerError("An organization needs at least one owner; make someone else an owner first.")
        current.delete()
        # Their keys stop working with the membership (``ApiKey.objects.active``); revoked, they stay stopped.
        ApiKey.objects.filter(
            organization=current.organization, created_by=current.user, revoked_at__isnull=True
        ).update(revoked_at=timezone.now())


def _is_last_owner(membership: Membership, owners: Iterable[Membership]) -> bool:
    return all(owner.pk == membership.pk for owner in owners)


def api_key_create(
    *, organization: Organization, created_by: User | None, name: str, expires_at: datetime | None = None
) -> tuple[ApiKey, str]:
    """Issue a key for ``organization``. The raw key is returned this once; only its hash is stored.

    Callers check that the person may manage the organization's keys. A key made by a
    person stops working when they leave the organization or are deactivated; one with
    ``expires_at`` stops then.
    """
    return ApiKey.issue(organization=organization, created_by=created_by, name=name, expires_at=expires_at)


def api_keys_revoke_of_user(user: User) -> int:
    """Revoke every key ``user`` made (their account is being deleted); the number revoked."""
    return ApiKey.objects.filter(created_by=user, revoked_at__isnull=True).update(revoked_at=timezone.now())


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    """Revoke a key: it stops authenticating at once. Revoking twice changes nothing."""
    api_key.revoke()
    return api_key


@dataclass(frozen=True)
class ProvisionedKey:
    api_key: ApiKey
    raw_key: str
    organization_created: bool
    user_created: bool
    membership_created: bool


def api_key_provision(*, organization_slug: str, email: str, name: str) -> ProvisionedKey:
    """Issue a key for ``email`` in ``organization_slug``, creating what is missing.

    For operators and scripts: a missing organization is created (named after
    its slug), a missing user is created without a usable password, and a user
    who is not yet a member joins as owner.
    """
    with transaction.atomic():
        organization = Organization.objects.filter(slug=organization_slug).first()
        organization_created = organization is None
        if organization is None:
            organization = Organization.objects.create(name=organization_slug, slug=organization_slug)
        user = User.objects.filter(email__iexact=email).first()
        user_created = user is None
        if user is None:
            user = user_create(email=email, password=None)
        _, membership_created = Membership.objects.get_or_create(
            user=user, organization=organization, defaults={"role": Role.OWNER}
        )
        api_key, raw_key = api_key_create(organization=organization, created_by=user, name=name)
    return ProvisionedKey(api_key, raw_key, organization_created, user_created, membership_created)


def secrets_reencrypt() -> int:
    """Encrypt every stored secret (every ``EncryptedJSONField`` of any app: providers' keys, agents'
    tool variables) again with the first ``FIELD_ENCRYPTION_KEY``; how many rows.

    All in one transaction: a row no key can decrypt (``ValueError``) changes nothing.
    """
    count = 0
    with transaction.atomic():
        for model in apps.get_models():
            fields = [f.name for f in model._meta.concrete_fields if isinstance(f, EncryptedJSONField)]
            if not fields:
                continue
            manager = model._default_manager
            for row in manager.select_for_update().only("pk", *fields):
                # Read with any key, written with the first (``EncryptedJSONField``).
                manager.filter(pk=row.pk).update(**{name: getattr(row, name) for name in fields})
                count += 1
    return count
