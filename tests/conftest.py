from __future__ import annotations

from dataclasses import dataclass

import pytest

from accounts.models import Membership, Organization, Role, User
from agents.models import Agent
from tests.factories import AgentFactory, MembershipFactory, OrganizationFactory, UserFactory

# Fixtures and hooks that tests of several folders share (a moved test keeps its fixtures).
pytest_plugins = [
    "tests.fake_llm.plugin",
    "tests.support.api",
    "tests.support.live_server",
    "tests.support.sockets",
    "tests.support.live_chat",
    "tests.support.browser",
]


@dataclass
class Cast:
    """alice (org A admin), bob (org A member), charlie (org B owner)."""

    org_a: Organization
    org_b: Organization
    alice: User
    bob: User
    charlie: User


@pytest.fixture
def cast(db: None) -> Cast:
    org_a = OrganizationFactory(name="Acme", slug="acme")
    org_b = OrganizationFactory(name="Globex", slug="globex")
    alice = UserFactory(email="alice@example.com", name="Alice")
    bob = UserFactory(email="bob@example.com", name="Bob")
    charlie = UserFactory(email="charlie@example.com", name="Charlie")
    MembershipFactory(user=alice, organization=org_a, role=Role.ADMIN)
    MembershipFactory(user=bob, organization=org_a, role=Role.MEMBER)
    MembershipFactory(user=charlie, organization=org_b, role=Role.OWNER)
    assert Membership.objects.count() == 3
    return Cast(org_a=org_a, org_b=org_b, alice=alice, bob=bob, charlie=charlie)


@pytest.fixture
def agent(cast: Cast) -> Agent:
    """An agent of org A, as ``agent_create`` makes one (the demo model, the default blocks, its two rows).

    A module whose agent needs more (tools, blocks, a model) defines its own, also through ``AgentFactory``.
    """
    return AgentFactory(organization=cast.org_a)
