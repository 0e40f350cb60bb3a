"""``send_message``: Letta's classic way for an agent to talk to the user."""

from __future__ import annotations

from typing import Any

from tools.base import ToolContext
from tools.builtins.base import BuiltinTool, parameters, prop


async def _send_message(arguments: dict[str, Any], context: ToolContext) -> None:
    # Like Letta: the message itself is the call's argument, which the transcript shows;
    # the tool has nothing to do and returns None.
    return None


SEND_MESSAGE = BuiltinTool(
    name="send_message",
    tool_type="letta_core",
    description="Sends a message to the human user.",
    parameters=parameters(
        {"message": prop("string", "Message contents. All unicode (including emojis) are supported.")},
        required=["message"],
    ),
    run=_send_message,
)
