from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from agents.engine.collaborators import TurnCollaborators
from agents.engine.context import ModelSettings
from agents.engine.events import EngineEvent
from agents.engine.inputs import TurnInput, UserInput
from agents.engine.loop import start_turn
from agents.engine.rules import ToolRules
from agents.models import Agent, Message, Run
from agents.runs.store import DjangoConversationStore
from tests.factories import AgentFactory, OrganizationFactory
from tests.fakes import RecordingToolRunner, ScriptedLLM, reply
from tools.base import ToolContext, ToolSpec


def spec(name: str, *, requires_approval: bool = False, kind: str = "source", **properties: str) -> ToolSpec:
    return ToolSpec(
        name=name,
        kind=kind,  # type: ignore[arg-type]
        json_schema={
            "name": name,
            "description": f"The {name} tool.",
            "parameters": {
                "type": "object",
                "properties": {key: {"type": value} for key, value in properties.items()},
                "required": list(properties),
            },
        },
        requires_approval=requires_approval,
    )


def secret_code(input_text: str) -> str:
    return f"code-{len(input_text)}"


def roll_dice(num_sides: int) -> str:
    return str(num_sides)


STANDARD_TOOLS = [
    spec("get_secret_code", requires_approval=True, input_text="string"),
    spec("roll_dice", num_sides="integer"),
]


class Harness:
    """An agent with rows in the real database, driven turn by turn with a scripted model."""

    def __init__(self, agent: Agent, tools: list[ToolSpec], rules: list[dict[str, Any]] | None = None) -> None:
        self.agent = agent
        self.tools = tools
        self.rules = rules or []
        self.runner = RecordingToolRunner({"get_secret_code": secret_code, "roll_dice": roll_dice})
        self.runs: list[Run] = []
        self.llm: ScriptedLLM | None = None
        self.model_settings: dict[str, Any] = {}

    async def turn(
        self,
        turn_input: TurnInput,
        script: list,
        *,
        stream_tokens: bool = False,
        max_steps: int = 10,
        extra_functions: dict[str, Callable[..., Any]] | None = None,
    ) -> list[EngineEvent]:
        turn = await self.start(turn_input, script, stream_tokens=stream_tokens, max_steps=max_steps)
        if extra_functions:
            self.runner.functions.update(extra_functions)
        return [event async for event in turn.events()]

    async def ask_for_code(self, input_text: str = "hello") -> list[EngineEvent]:
        """A turn that ends waiting on approval of one ``get_secret_code`` call, ``toolu_1``."""
        return await self.turn(
            [UserInput("code")],
            [reply("ok", tool_calls=[("get_secret_code", {"input_text": input_text})], call_ids=["toolu_1"])],
        )

    async def start(self, turn_input: TurnInput, script: list, *, stream_tokens: bool = False, max_steps: int = 10):
        run = await Run.objects.acreate(organization_id=self.agent.organization_id, agent=self.agent)
        self.runs.append(run)
        self.llm = ScriptedLLM(list(script))
        collab = TurnCollaborators(
            store=DjangoConversationStore(agent=self.agent, run=run),
            llm=self.llm,
            tool_runner=self.runner,
            tools=self.tools,
            settings=ModelSettings(handle="scripted/model", model="model", max_steps=max_steps, **self.model_settings),
            rules=ToolRules.from_json(self.rules),
            tool_context=ToolContext(organization_id=self.agent.organization_id, agent_id=self.agent.id),
        )
        return await start_turn(collab, turn_input, stream_tokens=stream_tokens)

    async def rows(self) -> list[Message]:
        return [m async for m in Message.objects.filter(agent=self.agent).order_by("seq")]


@sync_to_async
def make_agent() -> Agent:
    """A new agent (its system row and its login row, as ``agent_create`` writes them)."""
    return AgentFactory(organization=OrganizationFactory(), system="You are a test agent.")


@pytest.fixture
async def harness(transactional_db: None) -> Harness:
    return Harness(await make_agent(), STANDARD_TOOLS)
