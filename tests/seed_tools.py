"""The two tools of seed 000 (Letta's approval suite), as functions and as the source text
``letta_client``'s ``upsert_from_function`` sends for them (``inspect.getsource``)."""

from __future__ import annotations

import inspect


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


GET_SECRET_CODE_SOURCE = inspect.getsource(get_secret_code_tool)
ROLL_DICE_SOURCE = inspect.getsource(roll_dice_tool)
