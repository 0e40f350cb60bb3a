"""Running a built-in tool as the engine does: through the real runner, its result stored by the real store.

A memory tool's edit is staged (``tools.base.Staged``); it commits only with the tool row
that stores the call's result, so tests store that row too.
"""

from __future__ import annotations

import json
from typing import Any

from asgiref.sync import async_to_sync

from agents.engine.batch import tool_result
from agents.engine.store import MessageDraft, MessageSnapshot
from agents.models import Agent, Run
from agents.runs.store import DjangoConversationStore
from tests.factories import RunFactory
from tests.tools.helpers import FAST_LIMITS
from tools.base import ToolContext, ToolOutcome, ToolSpec
from tools.builtins import default_registry
from tools.runtime import DefaultToolRunner


def run_tool(agent: Agent, name: str, *, run: Run | None = None, **arguments: object) -> ToolOutcome:
    """Run the built-in ``name`` for ``agent`` (its outcome, staged write included); nothing is stored."""
    builtin = default_registry().get(name)
    assert builtin is not None and builtin.available
    spec = ToolSpec(name=name, kind="builtin", json_schema=builtin.json_schema)
    context = ToolContext(organization_id=agent.organization_id, agent_id=agent.id, run_id=run.id if run else None)
    return async_to_sync(DefaultToolRunner(limits=FAST_LIMITS).run)(spec, json.dumps(arguments), context)


def store_result(agent: Agent, run: Run, name: str, outcome: ToolOutcome, *, row_id: Any = None) -> MessageSnapshot:
    """Store ``outcome`` as a tool row of ``run`` (``row_id`` forces the row's id), with its staged write."""
    call = {"id": "call_test", "name": name, "arguments": "{}"}
    result = tool_result(call, outcome.status, outcome.tool_return, outcome.func_response)  # type: ignore[arg-type]
    store = DjangoConversationStore(agent=agent, run=run)
    draft = MessageDraft(role="tool", tool_returns=[result], id=row_id)
    [row] = async_to_sync(store.append)([draft], write=outcome.write)
    return row


def call(agent: Agent, name: str, *, run: Run | None = None, **arguments: object) -> ToolOutcome:
    """Run the built-in and store its result as the engine does; the outcome."""
    run = run or RunFactory(organization=agent.organization, agent=agent)
    outcome = run_tool(agent, name, run=run, **arguments)
    store_result(agent, run, name, outcome)
    return outcome
