"""Typed factory_boy factories and the standard cast (alice, bob, charlie)."""

from __future__ import annotations

import factory
from factory.django import DjangoModelFactory

from accounts.models import ApiKey, Invite, Membership, Organization, Role, User
from agents.models import Agent, Message, Run
from tools.models import AgentTool, Tool

DEFAULT_PASSWORD = "correct-horse-battery-staple"


class OrganizationFactory(DjangoModelFactory[Organization]):
    class Meta:
        model = Organization

    name = factory.Sequence(lambda n: f"Organization {n}")
    slug = factory.Sequence(lambda n: f"org-{n}")


class UserFactory(DjangoModelFactory[User]):
    class Meta:
        model = User
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"user{n}@example.com")
    name = factory.Faker("name")
    password = factory.PostGenerationMethodCall("set_password", DEFAULT_PASSWORD)

    @classmethod
    def _after_postgeneration(cls, instance: User, create: bool, results: dict | None = None) -> None:
        if create:
            instance.save()


class MembershipFactory(DjangoModelFactory[Membership]):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    organization = factory.SubFactory(OrganizationFactory)
    role = Role.MEMBER


class AgentFactory(DjangoModelFactory[Agent]):
    class Meta:
        model = Agent

    organization = factory.SubFactory(OrganizationFactory)
    name = factory.Sequence(lambda n: f"agent-{n}")
    model = "demo/echo-1"


class ToolFactory(DjangoModelFactory[Tool]):
    class Meta:
        model = Tool

    organization = factory.SubFactory(OrganizationFactory)
    name = factory.Sequence(lambda n: f"tool_{n}")
    description = "A test tool."
    source_code = factory.LazyAttribute(lambda o: f"def {o.name}() -> str:\n    return 'ok'\n")
    json_schema = factory.LazyAttribute(
        lambda o: {"name": o.name, "description": o.description, "parameters": {"type": "object", "properties": {}}}
    )


class AgentToolFactory(DjangoModelFactory[AgentTool]):
    class Meta:
        model = AgentTool

    agent = factory.SubFactory(AgentFactory)
    tool = factory.SubFactory(ToolFactory, organization=factory.SelfAttribute("..agent.organization"))


def api_key_for(organization: Organization, user: User | None = None, name: str = "test") -> tuple[ApiKey, str]:
    return ApiKey.issue(organization=organization, created_by=user, name=name)


class InviteFactory(DjangoModelFactory[Invite]):
    class Meta:
        model = Invite

    organization = factory.SubFactory(OrganizationFactory)
    email = factory.Sequence(lambda n: f"invitee{n}@example.com")
    role = Role.MEMBER


class RunFactory(DjangoModelFactory[Run]):
    class Meta:
        model = Run

    agent = factory.SubFactory(AgentFactory)
    organization = factory.SelfAttribute("agent.organization")


class MessageFactory(DjangoModelFactory[Message]):
    class Meta:
        model = Message

    agent = factory.SubFactory(AgentFactory)
    organization = factory.SelfAttribute("agent.organization")
    seq = factory.Sequence(lambda n: n + 1)
    role = "user"
    content = factory.LazyFunction(lambda: [{"type": "text", "text": "hello"}])
