"""The demo organization that ``manage.py seed_demo`` creates and keeps in shape.

Every run converges on the same state, so it is safe to run on every start:
one organization, one user whose password is reset to the documented demo
password, one API key derived from ``SECRET_KEY`` (the same on every run of an
installation, so it can be printed each time although only its hash is stored),
and one agent with two tools (the built-ins ``roll_dice`` and ``get_secret_code``, which need
no sandbox, so the demo works on any host).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import textwrap
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import API_KEY_PREFIX, ApiKey, Membership, Organization, Role, User, hash_api_key
from agents.models import Agent
from agents.services import agent_create
from tools.models import AgentTool, Tool
from tools.services import APPROVED_DEMO_TOOLS, demo_tools_upsert

DEMO_ORGANIZATION_NAME = "Demo"
DEMO_ORGANIZATION_SLUG = "demo"
DEMO_EMAIL = "demo@example.com"
DEMO_PASSWORD = "demo-password"
DEMO_KEY_NAME = "demo"
DEMO_AGENT_NAME = "Demo agent"
DEMO_MODEL = "demo/echo-1"

# The source copies earlier seeds stored; demo_seed turns them into the built-ins (tools.builtins.demo).
ROLL_DICE_SOURCE = textwrap.dedent(
    '''
    def roll_dice(num_sides: int) -> str:
        """Roll a die and return the number that came up.

        Args:
            num_sides: How many sides the die has.

        Returns:
            The number rolled, between 1 and num_sides.
        """
        import random

        return str(random.randint(1, num_sides))
    '''
).lstrip()

GET_SECRET_CODE_SOURCE = textwrap.dedent(
    '''
    def get_secret_code(input_text: str) -> str:
        """Return the secret code for a text. A person must approve each call.

        Args:
            input_text: The text to derive the secret code from.

        Returns:
            The secret code.
        """
        import hashlib

        return "SECRET-" + hashlib.sha256(input_text.encode()).hexdigest()[:8].upper()
    '''
).lstrip()

DEMO_TOOL_SOURCES = (ROLL_DICE_SOURCE, GET_SECRET_CODE_SOURCE)


@dataclass(frozen=True)
class DemoSeed:
    organization: Organization
    user: User
    password: str
    raw_api_key: str
    agent: Agent
    tools: list[Tool]


def demo_api_key() -> str:
    """The installation's demo key: an HMAC of ``SECRET_KEY``, so it is stable and not guessable."""
    digest = hmac.new(settings.SECRET_KEY.encode(), b"seed_demo api key", hashlib.sha256).digest()
    return API_KEY_PREFIX + "demo-" + base64.urlsafe_b64encode(digest).decode().rstrip("=")


def demo_seed(*, password: str = DEMO_PASSWORD, staff: bool = False) -> DemoSeed:
    """Create or restore the demo rows. ``staff`` makes the demo user a superuser (embedded runs)."""
    with transaction.atomic():
        organization, _ = Organization.objects.get_or_create(
            slug=DEMO_ORGANIZATION_SLUG, defaults={"name": DEMO_ORGANIZATION_NAME}
        )
        user = User.objects.filter(email=DEMO_EMAIL).first() or User(email=DEMO_EMAIL, name="Demo user")
        user.set_password(password)
        user.is_active = True
        user.is_staff = user.is_superuser = staff
        user.save()
        Membership.objects.update_or_create(user=user, organization=organization, defaults={"role": Role.OWNER})

        raw_key = demo_api_key()
        # A demo key derived from an earlier SECRET_KEY stops working; one demo key is active at a time.
        ApiKey.objects.for_org(organization).active().filter(name=DEMO_KEY_NAME, created_by=user).exclude(
            key_hash=hash_api_key(raw_key)
        ).update(revoked_at=timezone.now())
        api_key = ApiKey.objects.filter(key_hash=hash_api_key(raw_key)).first()
        if api_key is None:
            ApiKey.objects.create(
                organization=organization,
                created_by=user,
                name=DEMO_KEY_NAME,
                prefix=raw_key[: len(API_KEY_PREFIX) + 6],
                key_hash=hash_api_key(raw_key),
            )
        elif api_key.revoked_at is not None:
            api_key.revoked_at = None
            api_key.save(update_fields=["revoked_at"])

        tools = demo_tools_upsert(organization=organization, replacing_sources=DEMO_TOOL_SOURCES)
        Tool.objects.filter(pk__in=[tool.pk for tool in tools], name__in=APPROVED_DEMO_TOOLS).update(
            default_requires_approval=True
        )
        # Created like any agent (its memory blocks, its first rows); an existing one keeps its history.
        agent = Agent.objects.for_org(organization).filter(name=DEMO_AGENT_NAME).first() or agent_create(
            organization=organization, created_by=user, name=DEMO_AGENT_NAME, model=DEMO_MODEL
        )
        for tool in tools:
            AgentTool.objects.get_or_create(agent=agent, tool=tool)
    return DemoSeed(organization, user, password, raw_key, agent, tools)
