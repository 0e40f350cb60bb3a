"""Sign-up by email confirmation, with one answer whether or not the address has an account.

A sign-up form sends one email and shows "check your email", whatever the address:

- an address without an account gets a link that creates the account when followed. The
  link carries the form's data signed with ``SECRET_KEY`` (the password only as an encrypted
  hash), so nothing is stored until the owner of the address confirms: nobody can hold an
  address they cannot read;
- an address with an account gets a notice instead (log in, or reset the password).

So the page cannot tell anyone which addresses have accounts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.core import signing
from django.db import transaction
from django.urls import reverse

from accounts import services
from accounts.crypto import decrypt_secret, encrypt_secret
from accounts.mail import send_account_mail
from accounts.models import User

if TYPE_CHECKING:
    from collections.abc import Callable

SALT = "accounts.signup.confirm"


class SignupLinkInvalid(services.AccountsError):
    status_code = 410


@dataclass(frozen=True)
class ConfirmedSignup:
    user: User
    invite_token: str


def signup_allowed(*, invited: bool) -> bool:
    """``SIGNUP_MODE``: ``open`` to anyone, ``invite`` only with a pending invite, ``closed`` to nobody."""
    mode = settings.SIGNUP_MODE
    return mode == "open" or (mode == "invite" and invited)


def signup_request(
    *,
    email: str,
    name: str,
    password: str,
    organization_name: str,
    invite_token: str,
    absolute_url: Callable[[str], str],
) -> None:
    """Email ``email`` a confirmation link, or a notice when it already has an account.

    Nothing is stored before the link is followed, so a mail failure (``MailNotSent``) leaves nothing behind.
    """
    normalized = User.objects.normalize_email(email).lower()
    login_url = absolute_url(reverse("accounts:login"))
    if User.objects.filter(email__iexact=normalized).exists():
        send_account_mail(
            "Someone tried to sign up with your address",
            "Somebody (perhaps you) tried to create an account with this email address, which already has one.\n\n"
            f"Log in at {login_url}\nIf you did not ask for this, you can ignore this message.",
            normalized,
        )
        return
    token = signing.dumps(
        {
            "email": normalized,
            "name": name,
            "password": encrypt_secret(make_password(password)),
            "organization": organization_name,
            "invite": invite_token,
        },
        salt=SALT,
        compress=True,
    )
    link = absolute_url(reverse("accounts:signup_confirm", kwargs={"token": token}))
    hours = settings.SIGNUP_LINK_MAX_AGE_SECONDS // 3600
    send_account_mail(
        "Confirm your sign-up",
        f"Follow this link to create your account (it works for {hours} hours):\n\n{link}\n\n"
        "If you did not ask for this, you can ignore this message.",
        normalized,
    )


def signup_confirm(token: str) -> ConfirmedSignup:
    """Create the account a confirmation link stands for; ``SignupLinkInvalid`` when it cannot."""
    try:
        data = signing.loads(token, salt=SALT, max_age=settings.SIGNUP_LINK_MAX_AGE_SECONDS)
    except signing.SignatureExpired:
        raise SignupLinkInvalid("This sign-up link has expired; sign up again.") from None
    except signing.BadSignature:
        raise SignupLinkInvalid("This sign-up link is not valid.") from None
    try:
        with transaction.atomic():
            user = services.user_signup(
                email=data["email"], name=data["name"], password=None, organization_name=data["organization"]
            )
            user.password = decrypt_secret(data["password"])
            user.save(update_fields=["password"])
    except services.EmailTaken:
        raise SignupLinkInvalid("This account exists already: log in.") from None
    return ConfirmedSignup(user=user, invite_token=data["invite"])
