from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Any, ClassVar

from django.contrib.auth.models import AbstractBaseUser, BaseUserManager, PermissionsMixin
from django.db import models
from django.utils import timezone
from django.utils.text import slugify

from accounts.scoping import OrgScopedQuerySet, PublicIdModel
from accounts.signals import api_keys_updated


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def create_user(self, email: str, password: str | None = None, **extra: Any) -> User:
        if not email:
            raise ValueError("Users need an email address.")
        user = self.model(email=self.normalize_email(email).lower(), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **extra: Any) -> User:
        extra.setdefault("is_staff", True)
        extra.setdefault("is_superuser", True)
        return self.create_user(email, password, **extra)


class User(AbstractBaseUser, PermissionsMixin):
    """A person; they log in with their email address."""

    email = models.EmailField(unique=True)
    name = models.CharField(max_length=150, blank=True)
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False)
    date_joined = models.DateTimeField(default=timezone.now)

    objects = UserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: ClassVar[list[str]] = []

    def __str__(self) -> str:
        return self.email

    def organizations(self) -> models.QuerySet[Organization]:
        return Organization.objects.filter(memberships__user=self).order_by("name")


class Organization(PublicIdModel):
    id_prefix = "org"

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    approval_expiry_minutes = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="How long a tool call may wait for approval before it is denied; empty: for ever (as Letta).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name

    @classmethod
    def unique_slug(cls, name: str) -> str:
        base = slugify(name)[:60] or "org"
        slug, n = base, 1
        while cls.objects.filter(slug=slug).exists():
            n += 1
            slug = f"{base}-{n}"
        return slug


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    ADMIN = "admin", "Admin"
    MEMBER = "member", "Member"


class Membership(models.Model):
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="memberships")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OrgScopedQuerySet.as_manager()

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["user", "organization"], name="unique_membership"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.organization} ({self.role})"

    @property
    def can_manage(self) -> bool:
        """Owners and admins invite people and manage keys."""
        return self.role in (Role.OWNER, Role.ADMIN)


def _invite_token() -> str:
    return secrets.token_urlsafe(24)


#: How long an invite link works.
INVITE_LIFETIME = timedelta(days=7)


class InviteQuerySet(OrgScopedQuerySet):
    def pending(self) -> InviteQuerySet:
        """Neither used, revoked nor older than ``INVITE_LIFETIME``."""
        return self.filter(
            accepted_at__isnull=True, revoked_at__isnull=True, created_at__gt=timezone.now() - INVITE_LIFETIME
        )


class Invite(models.Model):
    """A link that lets whoever opens it (logged in) join an organization."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="invites")
    email = models.EmailField(blank=True, help_text="Who the invite is meant for (informational).")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    token = models.CharField(max_length=64, unique=True, default=_invite_token)
    created_by = models.ForeignKey(User, on_delete=models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    accepted_by = models.ForeignKey(User, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    accepted_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = InviteQuerySet.as_manager()

    def __str__(self) -> str:
        return f"Invite to {self.organization} ({self.email or 'anyone'})"

    @property
    def is_expired(self) -> bool:
        return self.created_at <= timezone.now() - INVITE_LIFETIME

    def is_for(self, user: User) -> bool:
        """An invite naming an email works only for the account with that email."""
        return not self.email or self.email.strip().lower() == (user.email or "").strip().lower()


API_KEY_PREFIX = "sk-agent-"


def hash_api_key(raw_key: str) -> str:
    # Keys are 256-bit random strings, so a fast hash is enough (no stretching
    # needed) and lets us look a key up by its hash in one indexed query.
    return hashlib.sha256(raw_key.encode()).hexdigest()


class ApiKeyQuerySet(OrgScopedQuerySet):
    def active(self) -> ApiKeyQuerySet:
        """Keys that authenticate: not revoked, not expired, and (when a person made them) their
        creator still active and a member of the key's organization."""
        creator_is_member = Membership.objects.filter(
            user=models.OuterRef("created_by"), organization=models.OuterRef("organization")
        )
        return self.alias(creator_is_member=models.Exists(creator_is_member)).filter(
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=timezone.now()),
            models.Q(created_by__isnull=True) | models.Q(created_by__is_active=True, creator_is_member=True),
            revoked_at__isnull=True,
        )

    def update(self, **kwargs: Any) -> int:
        """``QuerySet.update``, announcing (``api_keys_updated``) any change beyond ``last_used_at``."""
        count = super().update(**kwargs)
        if set(kwargs) - {"last_used_at"}:
            api_keys_updated.send(sender=ApiKey)
        return count


class ApiKey(models.Model):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="api_keys")
    created_by = models.ForeignKey(User, on_delete=models.SET_NULL, null=True, related_name="api_keys")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=20, help_text="The first characters of the key, to recognise it.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: the key does not expire.")

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @classmethod
    def issue(
        cls, *, organization: Organization, created_by: User | None, name: str, expires_at: datetime | None = None
    ) -> tuple[ApiKey, str]:
        """Create a key; the raw key is returned once and never stored."""
        raw = API_KEY_PREFIX + secrets.token_urlsafe(32)
        key = cls.objects.create(
            organization=organization,
            created_by=created_by,
            name=name,
            prefix=raw[: len(API_KEY_PREFIX) + 6],
            key_hash=hash_api_key(raw),
            expires_at=expires_at,
        )
        return key, raw

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > timezone.now())

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])
