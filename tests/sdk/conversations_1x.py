"""Each ``conversations`` method of letta-client 1.12, as an integrator calls it (run by ``driver.py``).

The twelve: ``conversations.create/retrieve/update/list/delete/cancel/fork/recompile`` and
``conversations.messages.create/list/compact/stream``. Like the driver, this file imports
nothing from the project: it runs in the SDK's virtualenv. ``ctx`` is the driver's ``Context``.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from letta_client import ConflictError, NotFoundError, UnprocessableEntityError

MODEL = "anthropic/claude-sonnet-4-5-20250929"
EMBEDDING = "openai/text-embedding-3-small"
GREEN_TEA = "call memory_insert with label=human new_str='Likes green tea.'"


def model_calls(ctx: Any) -> int:
    """How many model requests the fake has received (its control route)."""
    with urllib.request.urlopen(f"{ctx.fake_llm_url}/__requests__", timeout=10) as answer:
        return len(json.loads(answer.read()))


def check(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def _agent(ctx: Any, *, base_tools: bool = False) -> Any:
    return ctx.client.agents.create(
        name="conversations-1x",
        model=MODEL,
        embedding=EMBEDDING,
        include_base_tools=base_tools,
        memory_blocks=[{"label": "human", "value": "Nothing is known about the user yet."}],
    )


def _say(ctx: Any, conversation_id: str, text: str, **fields: Any) -> list[Any]:
    stream = ctx.client.conversations.messages.create(
        conversation_id, messages=[{"role": "user", "content": text}], **fields
    )
    return list(stream)


def _page(ctx: Any, conversation_id: str, **query: Any) -> list[Any]:
    """One page, not the auto-pager: Letta 0.16.8's ``after`` is positional (newer), so paging a
    ``desc`` listing by its last id, as the pager does, would start over (Letta Code swaps the cursors)."""
    return ctx.client.conversations.messages.list(conversation_id, **query).items


def _user_texts(ctx: Any, conversation_id: str, **query: Any) -> list[Any]:
    return [m.content for m in _page(ctx, conversation_id, **query) if m.message_type == "user_message"]


def conversations_create_retrieve_update_list_delete(ctx: Any) -> None:
    conversations = ctx.client.conversations
    agent = _agent(ctx)

    created = conversations.create(agent_id=agent.id, summary="planning")
    check(created.id.startswith("conv-") and created.agent_id == agent.id, f"created {created}")
    retrieved = conversations.retrieve(created.id)
    check(len(retrieved.in_context_message_ids) == 1, f"a system message only: {retrieved.in_context_message_ids}")
    updated = conversations.update(created.id, summary="renamed")
    check(updated.summary == "renamed", f"update {updated.summary!r}")
    second = conversations.create(agent_id=agent.id)
    listed = [c.id for c in conversations.list(agent_id=agent.id)]
    check(listed == [second.id, created.id], f"newest first: {listed}")
    found = [c.id for c in conversations.list(agent_id=agent.id, summary_search="renam")]
    check(found == [created.id], f"summary search: {found}")

    conversations.delete(created.id)
    try:
        conversations.retrieve(created.id)
    except NotFoundError:
        pass
    else:
        raise AssertionError("a deleted conversation is still retrievable")
    try:
        conversations.retrieve("default")
    except UnprocessableEntityError:
        return
    raise AssertionError("retrieve takes conv-<uuid4> only")


def conversations_messages_create_and_list(ctx: Any) -> None:
    agent = _agent(ctx)
    conversation = ctx.client.conversations.create(agent_id=agent.id)

    chunks = _say(ctx, conversation.id, "hello thread")

    types = [chunk.message_type for chunk in chunks]
    check(types[0] == "ping" and "assistant_message" in types, f"streamed by default, ping first: {types}")
    check(_user_texts(ctx, conversation.id) == ["hello thread"], "listed in the conversation")
    listed = _page(ctx, conversation.id, order="desc")
    check(listed[-1].message_type == "system_message", f"desc ends with the system message: {listed[-1]}")
    default = _user_texts(ctx, "default", agent_id=agent.id)
    check("hello thread" not in default, f"the default thread is untouched: {default}")
    _say(ctx, "default", "hello default", agent_id=agent.id)
    check("hello default" in _user_texts(ctx, "default", agent_id=agent.id), "agent-direct mode")


def conversations_fork_recompile_compact(ctx: Any) -> None:
    agent = _agent(ctx)
    conversation = ctx.client.conversations.create(agent_id=agent.id)
    for n in range(3):
        _say(ctx, conversation.id, f"message {n}")

    fork = ctx.client.conversations.fork(conversation.id)
    check(fork.id != conversation.id and fork.agent_id == agent.id, f"fork {fork}")
    check(_user_texts(ctx, fork.id, order="asc") == ["message 0", "message 1", "message 2"], "fork copies the window")
    prompt = ctx.client.conversations.recompile(conversation.id)
    check(isinstance(prompt, str) and "<memory_blocks>" in prompt, f"recompile answers the prompt: {prompt!r:.80}")
    compacted = ctx.client.conversations.messages.compact(conversation.id)
    check(compacted.num_messages_after < compacted.num_messages_before, f"compact {compacted}")
    check(_user_texts(ctx, fork.id, order="asc")[-1] == "message 2", "the fork is not compacted")


def conversations_cancel_and_stream(ctx: Any) -> None:
    agent = _agent(ctx)
    conversation = ctx.client.conversations.create(agent_id=agent.id)
    calls = model_calls(ctx)
    ctx.script_llm({"type": "reply", "text": "Too late.", "delay": 3.0})
    first: dict[str, Any] = {}

    def send() -> None:
        stream = ctx.client.conversations.messages.create(
            conversation.id, messages=[{"role": "user", "content": "slow"}], background=True
        )
        first["chunk"] = next(iter(stream))

    worker = threading.Thread(target=send)
    worker.start()
    worker.join(timeout=10)
    run_id = first["chunk"].run_id
    deadline = time.monotonic() + 10
    while model_calls(ctx) == calls and time.monotonic() < deadline:  # the slow reply is taken, not left queued
        time.sleep(0.05)
    cancelled = ctx.client.conversations.cancel(conversation.id)
    check(dict(cancelled) == {run_id: "cancelled"} or run_id in str(cancelled), f"cancel {cancelled}")
    deadline = time.monotonic() + 10
    while ctx.client.runs.retrieve(run_id).status not in ("cancelled", "completed") and time.monotonic() < deadline:
        time.sleep(0.1)
    replay = list(ctx.client.conversations.messages.stream(conversation.id, run_id=run_id))
    check(replay and replay[-1].message_type in ("stop_reason", "usage_statistics"), f"resumed: {replay}")
    try:
        ctx.client.conversations.cancel(conversation.id)
    except ConflictError:
        pass
    else:
        raise AssertionError("a second cancel finds no active run")
    # Whether or not the cancelled turn took the slow reply, none is left queued for the next scenario.
    urllib.request.urlopen(urllib.request.Request(f"{ctx.fake_llm_url}/__reset__", method="POST"), timeout=10).close()


def conversations_share_blocks_keep_histories(ctx: Any) -> None:
    agent = _agent(ctx, base_tools=True)
    one = ctx.client.conversations.create(agent_id=agent.id)
    two = ctx.client.conversations.create(agent_id=agent.id)

    _say(ctx, one.id, GREEN_TEA)
    _say(ctx, two.id, "about pears")

    check(_user_texts(ctx, one.id) == [GREEN_TEA], "the first keeps its history")
    check(_user_texts(ctx, two.id) == ["about pears"], "the second keeps its own")
    human = ctx.client.agents.blocks.retrieve("human", agent_id=agent.id)
    check("Likes green tea." in human.value, f"the edit is the agent's: {human.value!r}")
    check("Likes green tea." in ctx.client.conversations.recompile(two.id), "the other conversation sees it")


def conversations_run_at_once_and_lose_no_block_edit(ctx: Any) -> None:
    """Two conversations of one agent run turns at the same time; each edits the shared block (a slow
    model keeps both turns open together) and both edits stay: the block has one writer."""
    agent = _agent(ctx, base_tools=True)
    one = ctx.client.conversations.create(agent_id=agent.id)
    two = ctx.client.conversations.create(agent_id=agent.id)
    ctx.script_llm(
        *(
            {"text": "Noted.", "delay": 1.5, "tool_calls": [["memory_insert", {"label": "human", "new_str": fact}]]}
            for fact in ("Likes tea.", "Likes coffee.")
        )
    )
    failures: list[BaseException] = []

    def send(conversation_id: str) -> None:
        try:
            _say(ctx, conversation_id, "remember this")
        except BaseException as exc:
            failures.append(exc)

    workers = [threading.Thread(target=send, args=(conversation.id,)) for conversation in (one, two)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)

    check(not failures, f"both turns ran: {failures}")
    runs = sorted(ctx.client.runs.list(agent_id=agent.id), key=lambda run: run.created_at)
    check(len(runs) == 2 and runs[1].created_at < runs[0].completed_at, "the two turns overlapped")
    human = ctx.client.agents.blocks.retrieve("human", agent_id=agent.id).value
    check("Likes tea." in human and "Likes coffee." in human, f"no edit lost: {human!r}")


CONVERSATION_SCENARIOS: dict[str, Callable[[Any], None]] = {
    fn.__name__: fn
    for fn in (
        conversations_create_retrieve_update_list_delete,
        conversations_messages_create_and_list,
        conversations_fork_recompile_compact,
        conversations_cancel_and_stream,
        conversations_share_blocks_keep_histories,
        conversations_run_at_once_and_lose_no_block_edit,
    )
}
