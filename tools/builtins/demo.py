"""``roll_dice`` and ``get_secret_code``: the demo and starter agents' tools, as trusted code of ours.

They ship with the server, so they run in-process like every built-in and work where no
sandbox does (a Mac, a Linux box without bubblewrap): the first run shows a tool call and
an approval whatever the host. Source tools that users write still need the sandbox.
They are not part of Letta's base set (``add-base-tools``); onboarding attaches them.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from tools.base import ToolContext, ToolError
from tools.builtins.base import BuiltinTool, parameters, prop

MAX_SIDES = 1_000_000


async def _roll_dice(arguments: dict[str, Any], context: ToolContext) -> str:
    sides = arguments.get("num_sides")
    if not isinstance(sides, int) or isinstance(sides, bool) or not 1 <= sides <= MAX_SIDES:
        raise ToolError(f"num_sides must be a whole number between 1 and {MAX_SIDES}.")
    return str(secrets.randbelow(sides) + 1)


async def _get_secret_code(arguments: dict[str, Any], context: ToolContext) -> str:
    text = str(arguments.get("input_text", ""))
    return "SECRET-" + hashlib.sha256(text.encode()).hexdigest()[:8].upper()


ROLL_DICE = BuiltinTool(
    name="roll_dice",
    tool_type="custom",
    description="Roll a die and return the number that came up, between 1 and num_sides.",
    parameters=parameters({"num_sides": prop("integer", "How many sides the die has.")}, required=["num_sides"]),
    run=_roll_dice,
    in_base_set=False,
)

GET_SECRET_CODE = BuiltinTool(
    name="get_secret_code",
    tool_type="custom",
    description="Return the secret code for a text. A person must approve each call.",
    parameters=parameters(
        {"input_text": prop("string", "The text to derive the secret code from.")}, required=["input_text"]
    ),
    run=_get_secret_code,
    in_base_set=False,
)

DEMO_TOOLS = (ROLL_DICE, GET_SECRET_CODE)
