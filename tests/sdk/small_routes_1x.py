"""The organization's messages, step feedback and metrics, and running a tool by hand through letta-client 1.12.

``messages.list/search``, ``steps.feedback.create``, ``steps.metrics.retrieve`` and ``agents.tools.run``;
``POST /v1/tools/run``, which 1.12 has no method for, through the client's own ``post``. Run by
``driver.py`` in the SDK's virtualenv (it imports nothing from the project); ``ctx`` is the driver's ``Context``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

SHOUT = '''
def shout_NAME(text: str) -> str:
    """Say it louder.

    Args:
        text: What to say.
    """
    return text.upper()
'''


def check(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def messages_steps_and_tools_by_hand(ctx: Any) -> None:
    client = ctx.client
    word = f"penguin{uuid.uuid4().hex[:6]}"
    name = f"shout_{uuid.uuid4().hex[:6]}"  # one tool per SDK version: a name is unique in the organization
    tool = client.tools.create(source_code=SHOUT.replace("shout_NAME", name))
    agent = client.agents.create(name=f"small-{uuid.uuid4().hex[:6]}", model="demo/echo-1", tool_ids=[tool.id])
    client.agents.messages.create(agent.id, messages=[{"role": "user", "content": f"tell me about {word}"}])

    listed = list(client.messages.list(limit=1000))
    check(any(getattr(m, "content", None) == f"tell me about {word}" for m in listed), f"listed: {listed[-3:]}")
    hits = client.messages.search(query=word, agent_id=agent.id)
    said = [hit for hit in hits if hit.message_type == "user_message"]
    check(said and said[0].content == f"tell me about {word}" and said[0].agent_id == agent.id, f"hits: {hits}")

    step = next(iter(client.steps.list(agent_id=agent.id)))
    rated = client.steps.feedback.create(step.id, feedback="positive", tags=["helpful"])
    check(rated.feedback == "positive" and rated.tags == ["helpful"], f"rated: {rated!r}")
    metrics = client.steps.metrics.retrieve(step.id)
    check(metrics.id == step.id and metrics.agent_id == agent.id and metrics.step_start_ns, f"{metrics!r}")

    ran = client.agents.tools.run(name, agent_id=agent.id, args={"text": "hey"})
    check(ran.status == "success" and ran.func_return == "HEY", f"agent tool run: {ran!r}")
    adhoc = client.post("/v1/tools/run", body={"source_code": SHOUT, "args": {"text": "yo"}}, cast_to=object)
    check(adhoc["tool_return"] == "YO" and adhoc["message_type"] == "tool_return_message", f"tools/run: {adhoc}")
    client.agents.delete(agent.id)


SMALL_ROUTE_SCENARIOS: dict[str, Callable[[Any], None]] = {
    fn.__name__: fn for fn in (messages_steps_and_tools_by_hand,)
}
