"""A memory tool's edit commits in the transaction that stores the call's result, or not at all."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.db import IntegrityError

from agents.engine.batch import STALE_RESULT, BatchRunner
from agents.engine.rules import ToolRules
from agents.engine.store import MessageDraft
from agents.memory import services as memory_services
from agents.models import Agent, Block, Message, Passage
from agents.runs.store import DjangoConversationStore
from tests.factories import AgentFactory, RunFactory
from tests.memory.tool_calls import run_tool, store_result
from tests.tools.helpers import FAST_LIMITS
from tools.base import StaleWrite, ToolContext, ToolOutcome, ToolSpec
from tools.builtins import default_registry
from tools.runtime import DefaultToolRunner

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def agent() -> Agent:
    return AgentFactory(
        name="editor",
        memory_blocks=[{"label": "human", "value": "Name: Alice\nLikes: tea"}],
    )


def human(agent: Agent) -> Block:
    return Block.objects.get(agent_blocks__agent=agent, label="human")


def test_a_tool_edit_changes_nothing_until_its_result_is_stored(agent: Agent) -> None:
    run = RunFactory(organization=agent.organization, agent=agent)

    outcome = run_tool(agent, "memory_replace", run=run, label="human", old_str="tea", new_str="coffee")

    assert outcome.status == "success" and outcome.write is not None
    assert human(agent).value == "Name: Alice\nLikes: tea"
    store_result(agent, run, "memory_replace", outcome)
    assert human(agent).value == "Name: Alice\nLikes: coffee"


def test_when_storing_the_result_fails_the_block_is_unchanged(agent: Agent) -> None:
    run = RunFactory(organization=agent.organization, agent=agent)
    taken = store_result(agent, run, "memory_finish_edits", run_tool(agent, "memory_finish_edits", run=run))
    outcome = run_tool(agent, "memory_replace", run=run, label="human", old_str="tea", new_str="coffee")

    with pytest.raises(IntegrityError):
        store_result(agent, run, "memory_replace", outcome, row_id=taken.id)  # the row's id is taken: not stored

    assert human(agent).value == "Name: Alice\nLikes: tea"
    assert Message.objects.filter(agent=agent, role="tool").count() == 1


def test_a_staged_edit_whose_text_is_gone_by_commit_time_is_stale_and_stores_nothing(agent: Agent) -> None:
    run = RunFactory(organization=agent.organization, agent=agent)
    outcome = run_tool(agent, "memory_replace", run=run, label="human", old_str="tea", new_str="coffee")
    memory_services.block_update(block=human(agent), value="Name: Alice\nLikes: water")

    with pytest.raises(StaleWrite):
        store_result(agent, run, "memory_replace", outcome)

    assert human(agent).value == "Name: Alice\nLikes: water"
    assert not Message.objects.filter(agent=agent, role="tool").exists()


def test_a_staged_append_applies_to_the_value_at_commit_time_so_no_edit_is_lost(agent: Agent) -> None:
    run = RunFactory(organization=agent.organization, agent=agent)
    outcome = run_tool(agent, "core_memory_append", run=run, label="human", content="City: Oxford")
    memory_services.block_update(block=human(agent), value="Name: Alice\nLikes: water")

    store_result(agent, run, "core_memory_append", outcome)

    assert human(agent).value == "Name: Alice\nLikes: water\nCity: Oxford"


class EditedMeanwhile:
    """The real tool runner, with a person's edit of the block landing right after the first call ran."""

    def __init__(self, block: Block, value: str) -> None:
        self.runner = DefaultToolRunner(limits=FAST_LIMITS)
        self.block, self.value, self.calls = block, value, 0

    async def run(self, spec: ToolSpec, arguments: str, context: ToolContext) -> ToolOutcome:
        outcome = await self.runner.run(spec, arguments, context)
        self.calls += 1
        if self.calls == 1:
            from asgiref.sync import sync_to_async

            await sync_to_async(memory_services.block_update)(block=self.block, value=self.value)
        return outcome


def run_batch(agent: Agent, runner: Any, arguments: str) -> Any:
    run = RunFactory(organization=agent.organization, agent=agent)
    store = DjangoConversationStore(agent=agent, run=run)
    builtin = default_registry().get("memory_replace")
    assert builtin is not None
    spec = ToolSpec(name="memory_replace", kind="builtin", json_schema=builtin.json_schema)
    call = {"id": "call_1", "name": "memory_replace", "arguments": arguments, "requires_approval": False}
    [assistant] = async_to_sync(store.append)([MessageDraft(role="assistant", tool_calls=[call])])  # type: ignore[list-item]

    async def never() -> bool:
        return False

    batches = BatchRunner(
        store=store,
        tool_runner=runner,
        specs={"memory_replace": spec},
        rules=ToolRules.from_json([]),
        tool_context=ToolContext(organization_id=agent.organization_id, agent_id=agent.id, run_id=run.id),
        rows=[assistant],
        cancel_requested=never,
    )
    return async_to_sync(batches.run)(assistant, {})


def test_a_stale_edit_is_run_again_on_the_new_value_and_its_error_is_the_result(agent: Agent) -> None:
    runner = EditedMeanwhile(human(agent), "Name: Alice\nLikes: water")

    tool_row = run_batch(agent, runner, '{"label": "human", "old_str": "tea", "new_str": "coffee"}')

    [result] = tool_row.tool_returns
    assert runner.calls == 2
    assert result["status"] == "error"
    assert "did not appear verbatim" in result["tool_return"]
    assert human(agent).value == "Name: Alice\nLikes: water"


def test_an_edit_that_stays_stale_gives_up_with_an_error_and_no_change(agent: Agent) -> None:
    class AlwaysEditedMeanwhile(EditedMeanwhile):
        async def run(self, spec: ToolSpec, arguments: str, context: ToolContext) -> ToolOutcome:
            from asgiref.sync import sync_to_async

            self.calls += 1
            await sync_to_async(memory_services.block_update)(block=self.block, value=f"tea {self.calls}")
            outcome = await self.runner.run(spec, arguments, context)
            await sync_to_async(memory_services.block_update)(block=self.block, value=f"water {self.calls}")
            return outcome

    runner = AlwaysEditedMeanwhile(human(agent), "")

    tool_row = run_batch(agent, runner, '{"label": "human", "old_str": "tea", "new_str": "coffee"}')

    assert [r["tool_return"] for r in tool_row.tool_returns] == [STALE_RESULT]
    assert runner.calls == 3
    assert human(agent).value == "water 3"


def test_an_archival_insert_is_stored_with_its_result_or_not_at_all(agent: Agent) -> None:
    run = RunFactory(organization=agent.organization, agent=agent)
    taken = store_result(agent, run, "memory_finish_edits", run_tool(agent, "memory_finish_edits", run=run))
    outcome = run_tool(agent, "archival_memory_insert", run=run, content="Alice likes owls.")

    assert not Passage.objects.filter(agent=agent).exists()
    with pytest.raises(IntegrityError):
        store_result(agent, run, "archival_memory_insert", outcome, row_id=taken.id)
    assert not Passage.objects.filter(agent=agent).exists()

    store_result(agent, run, "archival_memory_insert", outcome)
    assert list(Passage.objects.filter(agent=agent).values_list("text", flat=True)) == ["Alice likes owls."]
