"""The two tools of seed 000 (Letta's approval suite), as functions and as the source text
``letta_client``'s ``upsert_from_function`` sends for them (``inspect.getsource``), and its
agent's ``agents.create`` arguments.

They are defined once, in ``tests/sdk/seed_000_1x.py``, which the 1.x SDK's own
interpreter also imports (it can import nothing of the project).
"""

from __future__ import annotations

import inspect

from tests.sdk.seed_000_1x import approval_agent_fields, get_secret_code_tool, roll_dice_tool

__all__ = [
    "GET_SECRET_CODE_SOURCE",
    "ROLL_DICE_SOURCE",
    "approval_agent_fields",
    "get_secret_code_tool",
    "roll_dice_tool",
]

GET_SECRET_CODE_SOURCE = inspect.getsource(get_secret_code_tool)
ROLL_DICE_SOURCE = inspect.getsource(roll_dice_tool)
