"""What a new organization starts with, so it can try an agent at once.

A "Starter agent" on the demo model (offline, no API key) with the two harmless built-ins
the demo organization also has: ``roll_dice``, and ``get_secret_code``, which asks a person
for approval before each call. A tool of the organization's own with one of those names
is kept, and attached instead. The chat page suggests prompts that call both.
"""

from __future__ import annotations

from django.db import transaction

from accounts.models import Organization, User
from agents import services as agent_services
from agents.models import Agent
from onboarding.demo import DEMO_MODEL, DEMO_TOOL_SOURCES
from tools.builtins import DEMO_TOOLS
from tools.models import Tool
from tools.services import demo_tools_upsert

STARTER_AGENT_NAME = "Starter agent"
STARTER_SYSTEM_PROMPT = (
    "You are the starter agent of a new organization. Be brief and friendly, and show what tools "
    "and approvals do when asked."
)


def starter_agent(organization: Organization) -> Agent | None:
    return Agent.objects.for_org(organization).filter(name=STARTER_AGENT_NAME).order_by("created_at").first()


def starter_kit_create(*, organization: Organization, created_by: User | None = None) -> Agent:
    """The organization's starter agent, created with its tools when missing (tools of those names are kept)."""
    with transaction.atomic():
        existing = starter_agent(organization)
        if existing is not None:
            return existing
        demo_tools_upsert(organization=organization, replacing_sources=DEMO_TOOL_SOURCES)
        tools = Tool.objects.for_org(organization).filter(name__in=[tool.name for tool in DEMO_TOOLS])
        return agent_services.agent_create(
            organization=organization,
            created_by=created_by,
            name=STARTER_AGENT_NAME,
            model=DEMO_MODEL,
            system=STARTER_SYSTEM_PROMPT,
            tool_ids=[tool.public_id for tool in tools],
        )
