"""The one way account pages send email: a mail server that is down is a message, not a 500."""

from __future__ import annotations

import logging
import smtplib

from django.core.mail import send_mail

from accounts.services import AccountsError

logger = logging.getLogger(__name__)

MAIL_FAILED = "We could not send the email. Try again later."


class MailNotSent(AccountsError):
    """The mail server refused or could not be reached; nothing was stored for this request."""

    status_code = 503


def send_account_mail(subject: str, body: str, recipient: str) -> None:
    """Send one message to ``recipient``, or raise ``MailNotSent`` (the cause goes to the log)."""
    try:
        send_mail(subject, body, None, [recipient])
    except (OSError, smtplib.SMTPException):
        logger.exception("Could not send %r to a recipient", subject)
        raise MailNotSent(MAIL_FAILED) from None
