"""Seed 000's 22 flows in letta-client 1.x idioms (run by ``driver.py`` with 1.12.0).

The translation, flow by flow, of ``tests/api/test_letta_sdk_seed_000.py``: the same
module-level constants (fixed ``otid``s included), calls and assertions, with 1.x's names:
``messages.create(streaming=True)`` for ``create_stream``, message dicts for
``MessageCreate`` / ``ApprovalCreate``, ``agents.update`` for ``modify``,
``tools.update_approval(body_requires_approval=)`` for ``modify_approval``, ``.items``
of a list page, attributes of typed ``tool_calls`` / ``tool_returns`` / ``approvals``.
1.x has no ``agents.runs.preview.retrieve``: those checks are left out. The seed's patched
model error is a fault scripted on the fake model.

The flows also run with an ``openai/…`` model (``ctx.model``). The seed expects a
``reasoning_message`` before each answer, which Anthropic's extended thinking gives;
OpenAI's own chat models send no reasoning, so there the fake plays an
OpenAI-compatible server that streams ``reasoning_content`` (DeepSeek, vLLM), the one
OpenAI-wire form whose answers have the shape these assertions expect.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

USER_MESSAGE_OTID = str(uuid.uuid4())
USER_MESSAGE_CONTENT = (
    "This is an automated test message. Call the get_secret_code_tool to get the code for text 'hello world'."
)
USER_MESSAGE_TEST_APPROVAL = [{"role": "user", "content": USER_MESSAGE_CONTENT, "otid": USER_MESSAGE_OTID}]
FAKE_REQUEST_ID = str(uuid.uuid4())
SECRET_CODE = str(740845635798344975)
USER_MESSAGE_FOLLOW_UP_OTID = str(uuid.uuid4())
USER_MESSAGE_FOLLOW_UP_CONTENT = "Thank you for the secret code."
USER_MESSAGE_FOLLOW_UP = [
    {"role": "user", "content": USER_MESSAGE_FOLLOW_UP_CONTENT, "otid": USER_MESSAGE_FOLLOW_UP_OTID}
]
USER_MESSAGE_PARALLEL_TOOL_CALL_CONTENT = (
    "This is an automated test message. Call the get_secret_code_tool 3 times in parallel for the following "
    "inputs: 'hello world', 'hello letta', 'hello test', and also call the roll_dice_tool once with a 16-sided dice."
)
USER_MESSAGE_PARALLEL_TOOL_CALL = [
    {"role": "user", "content": USER_MESSAGE_PARALLEL_TOOL_CALL_CONTENT, "otid": USER_MESSAGE_OTID}
]
MODEL_FAILS = {"type": "fault", "kind": "malformed_json", "status": 200}
DENIAL_REASON = f"You don't need to call the tool, the secret code is {SECRET_CODE}"
CANCEL_REASON = "Cancelled by user. Instead of responding, wait for next user input before replying."


def get_secret_code_tool(input_text: str) -> str:
    """
    A tool that returns the secret code based on the input. This tool requires approval before execution.
    Args:
        input_text (str): The input text to process.
    Returns:
        str: The secret code based on the input text.
    """
    return str(abs(hash(input_text)))


def roll_dice_tool(num_sides: int) -> str:
    """
    A tool that returns a random number between 1 and num_sides.
    Args:
        num_sides (int): The number of sides on the die.
    Returns:
        str: The random number between 1 and num_sides.
    """
    import random

    return str(random.randint(1, num_sides))


def approval_agent_fields(tool_ids: list[str], model: str | None = None) -> dict[str, Any]:
    """The ``agents.create`` arguments of the seed's ``agent`` fixture (the same in 0.1.324 and 1.x);
    ``model`` in place of the seed's Anthropic model."""
    return {
        "name": "approval_test_agent",
        "agent_type": "letta_v1_agent",
        "include_base_tools": False,
        "tool_ids": tool_ids,
        "include_base_tool_rules": False,
        "tool_rules": [],
        "model": model or "anthropic/claude-sonnet-4-5-20250929",
        "embedding": "openai/text-embedding-3-small",
        "tags": ["approval_test"],
    }


def check(condition: bool, message: str = "") -> None:
    if not condition:
        raise AssertionError(message)


def accumulate_chunks(stream: Any) -> list[Any]:
    messages, previous = [], None
    for chunk in stream:
        if chunk.message_type != previous:
            messages.append(chunk)
        previous = chunk.message_type
    return messages


def types(messages: list[Any]) -> list[str]:
    return [m.message_type for m in messages]


def approval(approvals: list[dict[str, Any]], *, approve: bool = False, reason: str | None = None) -> list[Any]:
    """The seed's ``ApprovalCreate``: wrong legacy fields that ``approvals`` overrides."""
    message: dict[str, Any] = {"approve": approve, "approval_request_id": FAKE_REQUEST_ID, "approvals": approvals}
    if reason is not None:
        message["reason"] = reason
    return [message]


def approve_item(tool_call_id: str) -> dict[str, Any]:
    return {"type": "approval", "approve": True, "tool_call_id": tool_call_id}


def deny_item(tool_call_id: str, reason: str = DENIAL_REASON) -> dict[str, Any]:
    return {"type": "approval", "approve": False, "tool_call_id": tool_call_id, "reason": reason}


def tool_item(tool_call_id: str) -> dict[str, Any]:
    return {"type": "tool", "tool_call_id": tool_call_id, "tool_return": SECRET_CODE, "status": "success"}


def acceptance(tool_call_id: str) -> list[Any]:
    """The seed's approval of one call."""
    return approval([approve_item(tool_call_id)])


def denial(tool_call_id: str) -> list[Any]:
    """The seed's denial of one call, with its reason."""
    return approval([deny_item(tool_call_id)], approve=True, reason=DENIAL_REASON)


def client_return(tool_call_id: str) -> list[Any]:
    """The seed's answer to one call with the client's own result."""
    return approval([tool_item(tool_call_id)], approve=True, reason=DENIAL_REASON)


class Seed:
    """One flow's fixtures: the approval and dice tools (``upsert_from_function``) and the agent."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.client = ctx.client
        approval_tool = self.client.tools.upsert_from_function(
            func=get_secret_code_tool, default_requires_approval=True
        )
        dice_tool = self.client.tools.upsert_from_function(func=roll_dice_tool)
        self.approval_tool = approval_tool
        agent = self.client.agents.create(**approval_agent_fields([approval_tool.id, dice_tool.id], ctx.model))
        self.agent = self.client.agents.update(
            agent.id, llm_config=dict(agent.llm_config.model_dump(), parallel_tool_calls=True)
        )
        provider = (ctx.model or "anthropic/").split("/")[0]
        check(self.agent.llm_config.model_endpoint_type == provider, f"the agent talks {provider}")

    def send(self, messages: list[Any]) -> Any:
        return self.client.agents.messages.create(self.agent.id, messages=messages)

    def stream(self, messages: list[Any], **options: Any) -> list[Any]:
        return accumulate_chunks(
            self.client.agents.messages.create(self.agent.id, messages=messages, streaming=True, **options)
        )

    def listed(self, **query: Any) -> list[Any]:
        return self.client.agents.messages.list(self.agent.id, **query).items

    def pending_tool_call(self) -> str:
        """Send the seed's approval message; the id of the call it then waits on."""
        return self.send(USER_MESSAGE_TEST_APPROVAL).messages[2].tool_call.tool_call_id

    def approve_tool_call(self, tool_call_id: str) -> None:
        self.send(acceptance(tool_call_id))

    def raises(self, text: str, messages: list[Any]) -> None:
        from letta_client import APIStatusError  # 1.x only: this module is also imported for its flow names

        try:
            self.send(messages)
        except APIStatusError as exc:
            check(text in json.dumps(exc.body), f"{text!r} not in {exc.body}")
            return
        raise AssertionError(f"no error {text!r}")


def seed_send_approval_without_pending_request(ctx: Any) -> None:
    seed = Seed(ctx)
    seed.raises("No tool call is currently awaiting approval", approval([approve_item(FAKE_REQUEST_ID)], approve=True))


def seed_send_user_message_with_pending_request(ctx: Any) -> None:
    seed = Seed(ctx)
    response = seed.send(USER_MESSAGE_TEST_APPROVAL)
    seed.raises("Please approve or deny the pending request before continuing", [{"role": "user", "content": "hi"}])
    seed.approve_tool_call(response.messages[2].tool_call.tool_call_id)


def seed_send_approval_message_with_incorrect_request_id(ctx: Any) -> None:
    seed = Seed(ctx)
    response = seed.send(USER_MESSAGE_TEST_APPROVAL)
    seed.raises("Invalid tool call IDs", approval([approve_item(FAKE_REQUEST_ID)], approve=True))
    seed.approve_tool_call(response.messages[2].tool_call.tool_call_id)


def seed_invoke_approval_request(ctx: Any) -> None:
    seed = Seed(ctx)
    messages = seed.send(USER_MESSAGE_TEST_APPROVAL).messages
    check(types(messages) == ["reasoning_message", "assistant_message", "approval_request_message"], types(messages))
    check(messages[2].tool_call.name == "get_secret_code_tool")
    check(len(messages[2].tool_calls) == 1 and messages[2].tool_calls[0].name == "get_secret_code_tool")
    check("request_heartbeat" not in json.loads(messages[2].tool_call.arguments))
    seed.approve_tool_call(messages[2].tool_call.tool_call_id)


def seed_invoke_approval_request_stream(ctx: Any) -> None:
    seed = Seed(ctx)
    messages = seed.stream(USER_MESSAGE_TEST_APPROVAL, stream_tokens=True)
    check(
        types(messages)
        == ["reasoning_message", "assistant_message", "approval_request_message", "stop_reason", "usage_statistics"],
        types(messages),
    )
    check(messages[2].tool_call.name == "get_secret_code_tool")
    seed.approve_tool_call(messages[2].tool_call.tool_call_id)


def seed_invoke_tool_after_turning_off_requires_approval(ctx: Any) -> None:
    seed = Seed(ctx)
    tool_call_id = seed.pending_tool_call()
    seed.stream(acceptance(tool_call_id), stream_tokens=True)
    seed.client.agents.tools.update_approval(
        seed.approval_tool.name, agent_id=seed.agent.id, body_requires_approval=False
    )

    messages = seed.stream(USER_MESSAGE_TEST_APPROVAL, stream_tokens=True)

    check(6 <= len(messages) <= 9, types(messages))
    kinds = types(messages)
    index = 0
    check(kinds[index] == "reasoning_message", kinds)
    index += 1
    if kinds[index] == "assistant_message":
        index += 1
    check(kinds[index : index + 3] == ["tool_call_message", "tool_return_message", "reasoning_message"], kinds)


def seed_approve_tool_call_request(ctx: Any) -> None:
    seed = Seed(ctx)
    tool_call_id = seed.pending_tool_call()
    messages = seed.stream(acceptance(tool_call_id), stream_tokens=True)
    check(len(messages) in (3, 5, 6), types(messages))
    check(messages[0].message_type == "tool_return_message" and messages[0].tool_call_id == tool_call_id)
    check(messages[0].status == "success")
    if len(messages) == 5:
        check(types(messages)[1:] == ["reasoning_message", "assistant_message", "stop_reason", "usage_statistics"])


def seed_approve_cursor_fetch(ctx: Any) -> None:
    seed = Seed(ctx)
    last_message_cursor = seed.listed(limit=1)[0].id
    response = seed.send(USER_MESSAGE_TEST_APPROVAL)
    last_message_id = response.messages[0].id
    tool_call_id = response.messages[2].tool_call.tool_call_id

    messages = seed.listed(after=last_message_cursor)
    check(
        types(messages) == ["user_message", "reasoning_message", "assistant_message", "approval_request_message"],
        types(messages),
    )
    check("request_heartbeat" not in json.loads(messages[3].tool_call.arguments))
    seed.approve_tool_call(tool_call_id)

    messages = seed.listed(after=last_message_id)
    check(len(messages) in (2, 4), types(messages))
    check(messages[0].message_type == "approval_response_message")
    check(messages[0].approval_request_id == tool_call_id and messages[0].approve is True)
    check(messages[0].approvals[0].approve is True and messages[0].approvals[0].tool_call_id == tool_call_id)
    check(messages[1].message_type == "tool_return_message" and messages[1].status == "success")
    if len(messages) == 4:
        check(types(messages)[2:] == ["reasoning_message", "assistant_message"])


def _answer_streams_to_the_end(ctx: Any, answer: Callable[[str], list[Any]]) -> None:
    """The seed's context checks: the streamed answer to the pending call ends with its stop reason and usage."""
    seed = Seed(ctx)
    messages = seed.stream(answer(seed.pending_tool_call()), stream_tokens=True)
    check(types(messages)[-2:] == ["stop_reason", "usage_statistics"], types(messages))


def seed_approve_with_context_check(ctx: Any) -> None:
    _answer_streams_to_the_end(ctx, acceptance)


def _follow_up_is_answered(seed: Seed, *, tool_call_allowed: bool = False, **options: Any) -> None:
    """The seed's follow-up checks: four chunks (five, with a tool call, where the seed allows it)."""
    messages = seed.stream(USER_MESSAGE_FOLLOW_UP, **options)
    check(len(messages) in ((4, 5) if tool_call_allowed else (4,)), types(messages))
    check(messages[0].message_type == "reasoning_message", types(messages))
    if len(messages) == 4:
        check(types(messages)[1:] == ["assistant_message", "stop_reason", "usage_statistics"], types(messages))


def _answered_then_followed_up(
    ctx: Any, answer: Callable[[str], list[Any]], *, tool_call_allowed: bool = False
) -> None:
    seed = Seed(ctx)
    seed.send(answer(seed.pending_tool_call()))
    _follow_up_is_answered(seed, tool_call_allowed=tool_call_allowed, stream_tokens=True)


def seed_approve_and_follow_up(ctx: Any) -> None:
    _answered_then_followed_up(ctx, acceptance, tool_call_allowed=True)


def _error_then_not_bricked(ctx: Any, answer: Callable[[str], list[Any]], *, tool_call_allowed: bool = False) -> None:
    """The model fails on the answer to the pending call; the agent still answers a follow-up."""
    seed = Seed(ctx)
    tool_call_id = seed.pending_tool_call()
    ctx.script_llm(MODEL_FAILS)
    messages = seed.stream(answer(tool_call_id), stream_tokens=True)
    stop_reason = next(m for m in messages if m.message_type == "stop_reason")
    check(stop_reason.stop_reason == "invalid_llm_response", stop_reason.stop_reason)
    _follow_up_is_answered(seed, tool_call_allowed=tool_call_allowed)


def seed_approve_and_follow_up_with_error(ctx: Any) -> None:
    _error_then_not_bricked(ctx, acceptance, tool_call_allowed=True)


def _answered_in_one_stream(ctx: Any, answer: Callable[[str], list[Any]]) -> list[Any]:
    """The seed's checks of the stream ``answer``ing the pending call; the stream's messages."""
    seed = Seed(ctx)
    tool_call_id = seed.pending_tool_call()
    messages = seed.stream(answer(tool_call_id))
    check(
        types(messages)
        == ["tool_return_message", "reasoning_message", "assistant_message", "stop_reason", "usage_statistics"],
        types(messages),
    )
    check(messages[0].tool_call_id == tool_call_id, messages[0].tool_call_id)
    return messages


def seed_deny_tool_call_request(ctx: Any) -> None:
    messages = _answered_in_one_stream(ctx, denial)
    check(messages[0].status == "error")
    check(SECRET_CODE in messages[2].content)


def _answered_then_listed(seed: Seed, answer: Callable[[str], list[Any]]) -> tuple[str, list[Any]]:
    """The seed's cursor checks around ``answer``ing the pending call: the call's id and what is listed after."""
    last_message_cursor = seed.listed(limit=1)[0].id
    response = seed.send(USER_MESSAGE_TEST_APPROVAL)
    last_message_id = response.messages[0].id
    tool_call_id = response.messages[2].tool_call.tool_call_id
    messages = seed.listed(after=last_message_cursor)
    check(len(messages) == 4 and messages[3].tool_call.tool_call_id == tool_call_id, types(messages))

    seed.send(answer(tool_call_id))

    messages = seed.listed(after=last_message_id)
    check(
        types(messages)
        == ["approval_response_message", "tool_return_message", "reasoning_message", "assistant_message"],
        types(messages),
    )
    return tool_call_id, messages


def seed_deny_cursor_fetch(ctx: Any) -> None:
    seed = Seed(ctx)
    tool_call_id, messages = _answered_then_listed(seed, denial)
    check(messages[0].approvals[0].approve is False and messages[0].approvals[0].tool_call_id == tool_call_id)
    check(messages[0].approvals[0].reason == DENIAL_REASON)
    check(messages[1].status == "error")


def seed_deny_with_context_check(ctx: Any) -> None:
    _answer_streams_to_the_end(
        ctx, lambda call: approval([deny_item(call, CANCEL_REASON)], approve=True, reason=CANCEL_REASON)
    )


def seed_deny_and_follow_up(ctx: Any) -> None:
    _answered_then_followed_up(ctx, denial)


def seed_deny_and_follow_up_with_error(ctx: Any) -> None:
    _error_then_not_bricked(ctx, denial)


def seed_client_side_tool_call_request(ctx: Any) -> None:
    messages = _answered_in_one_stream(ctx, client_return)
    check(messages[0].status == "success")
    check(messages[0].tool_return == SECRET_CODE and SECRET_CODE in messages[2].content)


def seed_client_side_tool_call_cursor_fetch(ctx: Any) -> None:
    seed = Seed(ctx)
    tool_call_id, messages = _answered_then_listed(seed, client_return)
    first = messages[0].approvals[0]
    check(
        (first.type, first.tool_call_id, first.tool_return, first.status)
        == ("tool", tool_call_id, SECRET_CODE, "success")
    )
    check(messages[1].status == "success" and messages[1].tool_return == SECRET_CODE)


def seed_client_side_tool_call_with_context_check(ctx: Any) -> None:
    _answer_streams_to_the_end(ctx, lambda call: approval([tool_item(call)], approve=True, reason=CANCEL_REASON))


def seed_client_side_tool_call_and_follow_up(ctx: Any) -> None:
    _answered_then_followed_up(ctx, client_return)


def seed_client_side_tool_call_and_follow_up_with_error(ctx: Any) -> None:
    _error_then_not_bricked(ctx, client_return)


def seed_parallel_tool_calling(ctx: Any) -> None:
    seed = Seed(ctx)
    last_message_cursor = seed.listed(limit=1)[0].id
    messages = seed.send(USER_MESSAGE_PARALLEL_TOOL_CALL).messages
    check(
        types(messages) == ["reasoning_message", "assistant_message", "tool_call_message", "approval_request_message"],
        types(messages),
    )
    check(len(messages[2].tool_calls) == 1 and messages[2].tool_calls[0].name == "roll_dice_tool")
    check("6" in messages[2].tool_calls[0].arguments)
    dice_tool_call_id = messages[2].tool_calls[0].tool_call_id
    gated = messages[3].tool_calls
    check(len(gated) == 3 and all(call.name == "get_secret_code_tool" for call in gated))
    check(
        ["hello world" in gated[0].arguments, "hello letta" in gated[1].arguments, "hello test" in gated[2].arguments]
        == [True] * 3
    )
    approve_id, deny_id, client_id = (call.tool_call_id for call in gated)

    messages = seed.send(
        approval(
            [
                approve_item(approve_id),
                {"type": "approval", "approve": False, "tool_call_id": deny_id},
                tool_item(client_id),
            ]
        )
    ).messages
    check(len(messages) in (1, 3, 4) and messages[0].message_type == "tool_return_message", types(messages))
    returns = {item.tool_call_id: item for item in messages[0].tool_returns}
    check(set(returns) == {approve_id, deny_id, client_id, dice_tool_call_id}, str(returns))
    check(returns[approve_id].status == "success" and returns[deny_id].status == "error")
    check(returns[client_id].status == "success" and returns[client_id].tool_return == SECRET_CODE)
    check(returns[dice_tool_call_id].status == "success")

    listed = seed.listed(after=last_message_cursor)
    check(
        types(listed)[:7]
        == [
            "user_message",
            "reasoning_message",
            "assistant_message",
            "tool_call_message",
            "approval_request_message",
            "approval_response_message",
            "tool_return_message",
        ],
        types(listed),
    )
    messages = seed.stream(USER_MESSAGE_FOLLOW_UP, stream_tokens=True)
    check(
        types(messages) == ["reasoning_message", "assistant_message", "stop_reason", "usage_statistics"],
        types(messages),
    )


FLOWS = {name: fn for name, fn in dict(globals()).items() if name.startswith("seed_") and callable(fn)}
