"""Typed factory_boy factories; an agent is always made as the product makes one (``agent_create``)."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import factory
from django.db.models import Max
from factory.django import DjangoModelFactory

from accounts.models import ApiKey, Invite, Membership, Organization, Role, User
from agents import services
from agents.models import Agent, Message, Run
from tools.models import AgentTool, Tool

if TYPE_CHECKING:
    from collections.abc import Callable

AGENT_CREATE_ARGUMENTS = frozenset(inspect.signature(services.agent_create).parameters)

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
    """An agent through ``agents.services.agent_create``: its system and login rows (seq 0 and 1),
    its default ``human`` and ``persona`` blocks unless given ``memory_blocks``, its tools by
    ``tool_ids``/``tool_names``. Fields ``agent_create`` takes no argument for are saved on the row after."""

    class Meta:
        model = Agent

    organization = factory.SubFactory(OrganizationFactory)
    name = factory.Sequence(lambda n: f"agent-{n}")
    model = "demo/echo-1"

    @classmethod
    def _create(cls, model_class: type[Agent], *args: Any, **fields: Any) -> Agent:
        agent = services.agent_create(**{key: value for key, value in fields.items() if key in AGENT_CREATE_ARGUMENTS})
        rest = {key: value for key, value in fields.items() if key not in AGENT_CREATE_ARGUMENTS}
        if rest:
            for key, value in rest.items():
                setattr(agent, key, value)
            agent.save(update_fields=list(rest))
        return agent


def keeper_agent(
    organization: Organization, *, human_limit: int | None = None, persona_limit: int | None = None
) -> Agent:
    """The memory tests' agent: a ``human`` block, and a read-only ``persona``; limits where given, else the default."""
    human: dict[str, Any] = {"label": "human", "value": "Name: Alice"}
    persona: dict[str, Any] = {"label": "persona", "value": "A careful archivist.", "read_only": True}
    if human_limit is not None:
        human["limit"] = human_limit
    if persona_limit is not None:
        persona["limit"] = persona_limit
    return AgentFactory(organization=organization, name="keeper", memory_blocks=[human, persona])


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


class McpToolFactory(ToolFactory):
    """A tool row as an MCP server's listing makes one: ``kind="mcp"``, no source, its server named in a tag."""

    class Params:
        server = "weather"

    kind = "mcp"
    tool_type = "external_mcp"
    source_code = ""
    tags = factory.LazyAttribute(lambda o: [f"mcp:{o.server}"])


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


def append_history(agent: Agent, rows: int, text: Callable[[int], str]) -> int:
    """Append ``rows`` alternating user and assistant messages to ``agent`` in one insert, message ``i``
    saying ``text(i)``; the seq of the first."""
    start = Message.objects.filter(agent=agent).count()
    Message.objects.bulk_create(
        [
            Message(
                organization_id=agent.organization_id,
                agent=agent,
                seq=start + i,
                role="user" if i % 2 == 0 else "assistant",
                content=[{"type": "text", "text": text(i)}],
            )
            for i in range(rows)
        ],
        batch_size=1000,
    )
    return start


def next_seq(agent: Agent) -> int:
    """The seq after the agent's last row (an agent starts with two, its system prompt and login)."""
    last = Message.objects.filter(agent=agent).aggregate(last=Max("seq"))["last"]
    return 0 if last is None else last + 1


class MessageFactory(DjangoModelFactory[Message]):
    class Meta:
        model = Message

    agent = factory.SubFactory(AgentFactory)
    organization = factory.SelfAttribute("agent.organization")
    seq = factory.LazyAttribute(lambda o: next_seq(o.agent))
    role = "user"
    content = factory.LazyFunction(lambda: [{"type": "text", "text": "hello"}])


def asking_for_approval(
    agent: Agent, *call_ids: str, said: str = "", arguments: str = '{"input_text": "hi"}'
) -> Message:
    """The agent's rows 2 and 3: a person asks for ``get_secret_code``, and the answer (saying ``said``)
    calls it once per id of ``call_ids``, each call waiting for approval. The call's row."""
    MessageFactory(agent=agent, seq=2, role="user", content=[{"type": "text", "text": "call get_secret_code"}])
    return MessageFactory(
        agent=agent,
        seq=3,
        role="assistant",
        content=[{"type": "text", "text": said}] if said else [],
        tool_calls=[
            {"id": call_id, "name": "get_secret_code", "arguments": arguments, "requires_approval": True}
            for call_id in call_ids
        ],
    )
