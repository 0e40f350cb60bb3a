"""Scenarios run by letta-client 1.x in its own virtualenv, against a live server.

Usage: ``python driver.py [--model=HANDLE] BASE_URL API_KEY FAKE_LLM_URL SCENARIO [SCENARIO ...]``; prints one JSON
object ``{scenario: {"ok": bool, "error": str | None, "facts": {...}}}``. This file is run by the
SDK's interpreter, not the project's: it imports nothing from the project.
"""

from __future__ import annotations

import inspect
import json
import sys
import threading
import time
import traceback
import urllib.request
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import letta_client
from archives_1x import ARCHIVE_SCENARIOS
from conversations_1x import CONVERSATION_SCENARIOS
from folders_1x import FOLDER_SCENARIOS
from letta_client import ConflictError, Letta, NotFoundError
from seed_000_1x import FLOWS, check, get_secret_code_tool, roll_dice_tool
from seed_000_1x import types as types_of
from small_routes_1x import SMALL_ROUTE_SCENARIOS

MODEL = "anthropic/claude-sonnet-4-5-20250929"
EMBEDDING = "openai/text-embedding-3-small"
SECRET_CODE = "740845635798344975"
APPROVAL_TEXT = (
    "This is an automated test message. Call the get_secret_code_tool to get the code for text 'hello world'."
)
CLIENT_TOOL = {
    "name": "read_local_file",
    "description": "Read a file on the caller's machine.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}
# The seed's two tools, as ``upsert_from_function`` would send them.
SECRET_SOURCE = inspect.getsource(get_secret_code_tool)
DICE_SOURCE = inspect.getsource(roll_dice_tool)

PAGED_TOOL_SOURCE = """
def paged_tool_{index}(x: int) -> str:
    '''Echo.

    Args:
        x: A number.
    '''
    return str(x)
"""


class Context:
    """The clients of one run of the driver, and a log of every request the SDK sent."""

    def __init__(self, base_url: str, api_key: str, fake_llm_url: str, model: str | None = None) -> None:
        self.fake_llm_url = fake_llm_url
        self.model = model
        self.sent: list[tuple[str, str, dict[str, str]]] = []
        http = httpx.Client(event_hooks={"request": [self._record]}, timeout=60)
        self.client = Letta(base_url=base_url, api_key=api_key, http_client=http)
        self.facts: dict[str, Any] = {}

    def _record(self, request: httpx.Request) -> None:
        self.sent.append((request.method, request.url.path, dict(request.headers)))

    def requests_to(self, method: str, path_suffix: str) -> int:
        return sum(1 for m, path, _ in self.sent if m == method and path.rstrip("/").endswith(path_suffix))

    def script_llm(self, *items: dict[str, Any]) -> None:
        """Queue answers on the fake model (its control route), for a slow or failing model call."""
        request = urllib.request.Request(
            f"{self.fake_llm_url}/__script__",
            data=json.dumps(list(items)).encode(),
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(request, timeout=10).read()

    def upsert(self, source: str, **fields: Any) -> Any:
        """``tools.upsert_from_function`` is gone from 1.12.1; its wire is ``PUT /v1/tools/`` with the source."""
        return self.client.tools.upsert(source_code=source, **fields)

    def agent(self, *, tool_ids: list[str] | None = None, name: str = "sdk-1x", **fields: Any) -> Any:
        return self.client.agents.create(
            name=name,
            model=MODEL,
            embedding=EMBEDDING,
            tool_ids=tool_ids or [],
            include_base_tools=False,
            **fields,
        )

    def approval_agent(self) -> tuple[Any, Any]:
        secret = self.upsert(SECRET_SOURCE, default_requires_approval=True)
        dice = self.upsert(DICE_SOURCE)
        agent = self.agent(tool_ids=[secret.id, dice.id], name="approval_test_agent", tags=["approval_test"])
        return agent, secret


# --- day one ------------------------------------------------------------------------------


def create_update_retrieve_delete(ctx: Context) -> None:
    client = ctx.client
    agent = ctx.agent(tags=["day-one"], memory_blocks=[{"label": "human", "value": "Ada"}])
    check(agent.model == MODEL, f"model {agent.model!r}")
    check(agent.llm_config.model == "claude-sonnet-4-5-20250929", "llm_config beside model")
    check(agent.model_settings is not None, "model_settings")

    updated = client.agents.update(agent.id, name="renamed", tags=["day-one", "renamed"])
    check(updated.name == "renamed" and "renamed" in updated.tags, "update")

    retrieved = client.agents.retrieve(agent.id, include=["agent.tools", "agent.blocks", "agent.pending_approval"])
    check(retrieved.pending_approval is None, "nothing pending")
    check([b.label for b in retrieved.blocks] == ["human"], f"blocks {retrieved.blocks}")

    client.agents.delete(agent.id)
    try:
        client.agents.retrieve(agent.id)
    except NotFoundError:
        return
    raise AssertionError("a deleted agent is still retrievable")


def iterate_agents_across_pages(ctx: Context) -> None:
    tag = f"page-{uuid.uuid4().hex[:8]}"
    created = [ctx.agent(name=f"paged-{index}", tags=[tag]).id for index in range(7)]
    before = ctx.requests_to("GET", "/v1/agents")

    seen = [agent.id for agent in ctx.client.agents.list(limit=2, tags=[tag])]

    ctx.facts["requests"] = ctx.requests_to("GET", "/v1/agents") - before
    check(seen == created[::-1], f"newest first, each once: {seen} vs {created[::-1]}")
    seen_asc = [agent.id for agent in ctx.client.agents.list(limit=3, tags=[tag], order="asc")]
    check(seen_asc == created, "oldest first with order=asc")


def iterate_an_agents_tools(ctx: Context) -> None:
    tools = [ctx.upsert(PAGED_TOOL_SOURCE.format(index=index)) for index in range(5)]
    agent = ctx.agent(tool_ids=[tool.id for tool in tools])

    seen = [tool.id for tool in ctx.client.agents.tools.list(agent.id, limit=2)]

    check(sorted(seen) == sorted(tool.id for tool in tools) and len(seen) == 5, f"each tool once: {seen}")


def attach_and_detach_a_tool(ctx: Context) -> None:
    dice = ctx.upsert(DICE_SOURCE)
    agent = ctx.agent()

    attached = ctx.client.agents.tools.attach(dice.id, agent_id=agent.id)
    check([t.name for t in attached.tools] == ["roll_dice_tool"], "attached")
    detached = ctx.client.agents.tools.detach(dice.id, agent_id=agent.id)
    check(detached.tools == [], "detached")


def update_approval_in_the_body(ctx: Context) -> None:
    agent, secret = ctx.approval_agent()

    off = ctx.client.agents.tools.update_approval(secret.name, agent_id=agent.id, body_requires_approval=False)
    check(not [r for r in off.tool_rules if r.type == "requires_approval"], "approval off")
    on = ctx.client.agents.tools.update_approval(secret.name, agent_id=agent.id, body_requires_approval=True)
    check([r.tool_name for r in on.tool_rules if r.type == "requires_approval"] == [secret.name], "approval on")


def reset_messages(ctx: Context) -> None:
    agent = ctx.agent()
    ctx.client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "remember me"}])

    bare = ctx.client.agents.messages.reset(agent.id)
    check(len(bare.message_ids) == 1, f"only the system message by default: {bare.message_ids}")
    seeded = ctx.client.agents.messages.reset(agent.id, add_default_initial_messages=True)
    check(len(seeded.message_ids) > 1, "the default first messages when asked")


def cancel_a_background_run(ctx: Context) -> None:
    agent = ctx.agent()
    nothing = ctx.client.agents.messages.cancel(agent.id)
    check(nothing == {}, f"cancel with nothing running: {nothing}")
    ctx.script_llm({"type": "reply", "text": "Too late.", "delay": 3.0})
    run = ctx.client.agents.messages.create_async(agent.id, messages=[{"role": "user", "content": "slow"}])
    deadline = time.monotonic() + 10
    while ctx.client.runs.retrieve(run.id).status != "running" and time.monotonic() < deadline:
        time.sleep(0.1)

    answer = ctx.client.agents.messages.cancel(agent.id)

    check(answer == {run.id: "cancelled"}, f"cancel answer {answer}")
    deadline = time.monotonic() + 15
    final = ctx.client.runs.retrieve(run.id)
    while final.status in ("created", "running") and time.monotonic() < deadline:
        time.sleep(0.2)
        final = ctx.client.runs.retrieve(run.id)
    ctx.facts["status"] = final.status
    check((final.status, final.stop_reason) == ("cancelled", "cancelled"), f"{final.status} / {final.stop_reason}")
    said = [m for m in ctx.client.agents.messages.list(agent.id, limit=10) if m.message_type == "assistant_message"]
    check(not any("Too late." in str(m.content) for m in said), "nothing after the cancel is kept")


def _cancel_while_the_model_thinks(ctx: Context, send: Callable[[str], Any]) -> tuple[Any, Any]:
    """Start a turn on a slow model in a thread, cancel it from here; what the turn answered and its run."""
    agent = ctx.agent()
    ctx.script_llm({"type": "reply", "text": "Too late.", "delay": 3.0})
    outcome: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: outcome.update(answer=send(agent.id)))
    worker.start()
    deadline = time.monotonic() + 10
    while not list(ctx.client.runs.list(agent_id=agent.id, active=True)) and time.monotonic() < deadline:
        time.sleep(0.1)
    cancelled = ctx.client.agents.messages.cancel(agent.id)
    worker.join(timeout=30)
    check(len(cancelled) == 1, f"one run cancelled: {cancelled}")
    run = ctx.client.runs.retrieve(next(iter(cancelled)))
    check((run.status, run.stop_reason) == ("cancelled", "cancelled"), f"{run.status} / {run.stop_reason}")
    said = [m for m in ctx.client.agents.messages.list(agent.id, limit=20) if m.message_type == "assistant_message"]
    check(not any("Too late." in str(m.content) for m in said), "nothing after the cancel is kept")
    return outcome.get("answer"), run


def cancel_a_streamed_turn(ctx: Context) -> None:
    def send(agent_id: str) -> list[Any]:
        stream = ctx.client.agents.messages.create(
            agent_id, messages=[{"role": "user", "content": "slow"}], streaming=True, stream_tokens=True
        )
        return list(stream)

    chunks, _ = _cancel_while_the_model_thinks(ctx, send)
    stop = [c.stop_reason for c in chunks if c.message_type == "stop_reason"]
    check(stop == ["cancelled"], f"the stream says cancelled: {[c.message_type for c in chunks]}")


def cancel_a_blocking_turn(ctx: Context) -> None:
    def send(agent_id: str) -> Any:
        return ctx.client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "slow"}])

    answer, _ = _cancel_while_the_model_thinks(ctx, send)
    check(answer.stop_reason.stop_reason == "cancelled", f"the answer says cancelled: {answer.stop_reason}")


def list_runs(ctx: Context) -> None:
    agent = ctx.agent()
    for text in ("one", "two"):
        ctx.client.agents.messages.create(agent.id, messages=[{"role": "user", "content": text}])

    ascending = [run.id for run in ctx.client.runs.list(agent_id=agent.id, order="asc")]
    descending = [run.id for run in ctx.client.runs.list(agent_id=agent.id, order="desc")]
    active = list(ctx.client.runs.list(agent_id=agent.id, active=True))
    completed = list(ctx.client.runs.list(agent_id=agent.id, statuses=["completed"], limit=1))

    check(len(ascending) == 2 and ascending == descending[::-1], f"order: {ascending} / {descending}")
    check(active == [], "no active run")
    check([run.id for run in completed] == descending, "statuses, iterated one at a time")


def client_side_tool_returns(ctx: Context) -> None:
    agent = ctx.agent()
    asked = ctx.client.agents.messages.create(
        agent.id,
        messages=[{"role": "user", "content": "Call the read_local_file tool for 'notes.txt'."}],
        client_tools=[CLIENT_TOOL],
    )
    request = asked.messages[-1]
    check(request.message_type == "approval_request_message", f"{types_of(asked.messages)}")
    check(asked.stop_reason.stop_reason == "requires_approval", "waits for the client")

    answered = ctx.client.agents.messages.create(
        agent.id,
        messages=[
            {
                "type": "tool_return",
                "tool_returns": [
                    {"tool_call_id": request.tool_calls[0].tool_call_id, "tool_return": "hello", "status": "success"}
                ],
            }
        ],
        client_tools=[CLIENT_TOOL],
    )
    check(answered.messages[0].message_type == "tool_return_message", f"{types_of(answered.messages)}")
    check(answered.messages[0].tool_returns[0].tool_return == "hello", "the client's result")
    check(answered.stop_reason.stop_reason == "end_turn", "the turn ends")


def streaming_through_create(ctx: Context) -> None:
    agent = ctx.agent()

    chunks = list(
        ctx.client.agents.messages.create(
            agent.id, messages=[{"role": "user", "content": "hello"}], streaming=True, stream_tokens=True
        )
    )
    deprecated = list(ctx.client.agents.messages.stream(agent.id, messages=[{"role": "user", "content": "again"}]))
    blocking = ctx.client.agents.messages.create(agent.id, input="and once more", streaming=False)

    kinds = [c.message_type for c in chunks]
    check(kinds[-2:] == ["stop_reason", "usage_statistics"], f"stream ends: {kinds}")
    check(kinds.count("assistant_message") > 1, "token deltas")
    check([c.message_type for c in deprecated][-2:] == ["stop_reason", "usage_statistics"], "messages.stream")
    check(blocking.stop_reason.stop_reason == "end_turn", "input= and streaming=False answer JSON")


def compaction_messages_when_asked(ctx: Context) -> None:
    """A 1,500-token window fills in a few turns; asked with ``include_compaction_messages``, a compaction
    shows as an ``event_message`` and a ``summary_message``, blocking and streamed, and every message stays listed."""
    agent = ctx.client.agents.create(name="compacted", model="demo/echo-1", context_window_limit=1500)
    sent, seen = [], {}
    for index in range(40):
        text = f"Turn {index}: " + "tell me about owls " * 15
        sent.append(text)
        if "blocking" not in seen:
            answer = ctx.client.agents.messages.create(
                agent.id, messages=[{"role": "user", "content": text}], include_compaction_messages=True
            )
            check(answer.stop_reason.stop_reason == "end_turn", f"turn {index} ends")
            messages = list(answer.messages)
        else:
            chunks = list(
                ctx.client.agents.messages.create(
                    agent.id,
                    messages=[{"role": "user", "content": text}],
                    streaming=True,
                    include_compaction_messages=True,
                )
            )
            check(chunks[-2].stop_reason == "end_turn", f"streamed turn {index} ends")
            messages = chunks
        kinds = types_of(messages)
        if "summary_message" in kinds:
            check(kinds.index("event_message") + 1 == kinds.index("summary_message"), f"event first: {kinds}")
            check("user_message" not in kinds, f"no summary as a user message: {kinds}")
            summary = messages[kinds.index("summary_message")]
            event = messages[kinds.index("event_message")]
            check(event.event_type == "compaction", f"{event}")
            check(bool(summary.summary) and summary.compaction_stats is not None, f"{summary}")
            # A streamed chunk's nested object stays a dict (the SDK builds stream chunks without validation).
            stats = summary.compaction_stats
            stats = stats if isinstance(stats, dict) else stats.model_dump()
            check(stats["messages_count_after"] <= stats["messages_count_before"], f"{stats}")
            check(stats["context_window"] == 1500 and stats["trigger"] == "post_step_context_check", f"{stats}")
            seen["streamed" if "blocking" in seen else "blocking"] = stats["trigger"]
            if len(seen) == 2:
                break
    check(len(seen) == 2, f"a compaction in a blocking and in a streamed turn: {seen}")
    listed = [m for m in ctx.client.agents.messages.list(agent.id, order="asc", limit=1000)]
    users = [m.content for m in listed if m.message_type == "user_message"]
    check(all(text in users for text in sent), "every message stays listed")
    ctx.facts["triggers"] = seen


def a_conflict_is_sent_once(ctx: Context) -> None:
    agent, _ = ctx.approval_agent()
    ctx.client.agents.messages.create(agent.id, messages=[{"role": "user", "content": APPROVAL_TEXT}])
    before = ctx.requests_to("POST", f"/v1/agents/{agent.id}/messages")

    try:
        ctx.client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
    except ConflictError as exc:
        ctx.facts["agent_id"] = agent.id
        ctx.facts["sent"] = ctx.requests_to("POST", f"/v1/agents/{agent.id}/messages") - before
        ctx.facts["detail"] = exc.body
        check(ctx.facts["sent"] == 1, f"sent {ctx.facts['sent']} times")
        ctx.facts["runs"] = len(list(ctx.client.runs.list(agent_id=agent.id)))
        listed = ctx.client.agents.messages.list(agent.id, limit=100)
        ctx.facts["refused_stored"] = sum(1 for m in listed if m.message_type == "user_message" and m.content == "hi")
        pending = ctx.client.agents.retrieve(agent.id, include=["agent.pending_approval"]).pending_approval
        check(pending is not None and pending.message_type == "approval_request_message", "pending_approval")
        return
    raise AssertionError("no 409")


AUDIT_FIELDS = (
    "decided_by",
    "decided_by_user_id",
    "decided_by_api_key_id",
    "decided_at",
    "transport",
    "original_arguments",
    "arguments",
    "always_allow",
)


def edit_and_approve_then_read_the_audit(ctx: Context) -> None:
    """The extensions of DESIGN §13 through 1.x: ``pending_approval``, an edited approval, the audit fields."""
    agent, _ = ctx.approval_agent()
    asked = ctx.client.agents.messages.create(agent.id, messages=[{"role": "user", "content": APPROVAL_TEXT}])
    [request] = [m for m in asked.messages if m.message_type == "approval_request_message"]
    call_id = request.tool_call.tool_call_id
    pending = ctx.client.agents.retrieve(agent.id, include=["agent.pending_approval"]).pending_approval
    check(pending is not None and pending.tool_call.tool_call_id == call_id, f"pending_approval {pending!r}")
    edited = {"input_text": "edited by a person"}
    approval = {"type": "approval", "approve": True, "tool_call_id": call_id, "arguments": edited}

    answered = ctx.client.agents.messages.create(agent.id, messages=[{"type": "approval", "approvals": [approval]}])

    check(types_of(answered.messages)[0] == "tool_return_message", f"{types_of(answered.messages)}")
    listed = ctx.client.agents.messages.list(agent.id, limit=100)
    [response] = [m for m in listed if m.message_type == "approval_response_message"]
    [item] = response.approvals
    ctx.facts["item"] = {name: getattr(item, name, None) for name in ("approve", "tool_call_id", *AUDIT_FIELDS)}
    check(item.approve is True and item.tool_call_id == call_id, f"{item!r}")
    nothing = ctx.client.agents.retrieve(agent.id, include=["agent.pending_approval"]).pending_approval
    check(nothing is None, "nothing pending after the answer")


def steps_carry_their_run(ctx: Context) -> None:
    agent = ctx.agent()
    response = ctx.client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
    run_id = response.usage.run_ids[0] if getattr(response.usage, "run_ids", None) else None
    runs = list(ctx.client.runs.list(agent_id=agent.id))
    steps = list(ctx.client.runs.steps.list(runs[0].id))
    check(steps and all(step.run_id == runs[0].id for step in steps), f"run_id on steps: {steps}")
    check(run_id in (None, runs[0].id), "usage names the run")


SCENARIOS: dict[str, Callable[[Context], None]] = (
    {
        fn.__name__: fn
        for fn in (
            create_update_retrieve_delete,
            iterate_agents_across_pages,
            iterate_an_agents_tools,
            attach_and_detach_a_tool,
            update_approval_in_the_body,
            reset_messages,
            cancel_a_background_run,
            cancel_a_streamed_turn,
            cancel_a_blocking_turn,
            list_runs,
            client_side_tool_returns,
            streaming_through_create,
            a_conflict_is_sent_once,
            compaction_messages_when_asked,
            steps_carry_their_run,
            edit_and_approve_then_read_the_audit,
        )
    }
    | CONVERSATION_SCENARIOS
    | FOLDER_SCENARIOS
    | ARCHIVE_SCENARIOS
    | SMALL_ROUTE_SCENARIOS
    | FLOWS
)


def main(argv: list[str]) -> int:
    """``--model=<handle>`` (optional, first) is the model seed 000's flows give their agent."""
    model = argv.pop(0).removeprefix("--model=") if argv and argv[0].startswith("--model=") else None
    base_url, api_key, fake_llm_url, *names = argv
    report: dict[str, Any] = {"version": letta_client.__version__}
    for name in names or list(SCENARIOS):
        ctx = Context(base_url, api_key, fake_llm_url, model)
        try:
            SCENARIOS[name](ctx)
            report[name] = {"ok": True, "error": None, "facts": ctx.facts}
        except Exception:
            report[name] = {"ok": False, "error": traceback.format_exc(), "facts": ctx.facts}
    sys.stdout.write(json.dumps(report, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
