"""Token estimates: the one place that turns characters into tokens.

Two ratios, because two questions are asked. A usage figure for a call the provider did
not count (marked ``Usage(estimated=True)``) should be close to what it would have billed:
about four characters a token, as real tokenizers give for English. Sizing a request
against the context window must err high, so that what is judged to fit does fit: three
characters a token (``pessimistic=True``), shown as an estimate wherever it is shown.

An image counts as ``IMAGE_TOKENS``, never as the characters of its base64: about what
Anthropic bills for an image of its largest size (width x height / 750, about 1,600 tokens).
"""

from __future__ import annotations

import json
import math
from functools import partial
from typing import TYPE_CHECKING

from agents.llm.base import AssistantTurn, ToolResultsTurn, Usage, UserTurn

if TYPE_CHECKING:
    from agents.llm.base import LLMRequest, ToolSchema, Turn

CHARS_PER_TOKEN = 4
PESSIMISTIC_CHARS_PER_TOKEN = 3
IMAGE_TOKENS = 1_600


def tokens_for_chars(chars: int, *, pessimistic: bool = False) -> int:
    """The tokens ``chars`` characters make: about four a token, or three when ``pessimistic``."""
    return math.ceil(chars / (PESSIMISTIC_CHARS_PER_TOKEN if pessimistic else CHARS_PER_TOKEN))


def estimate_tokens(text: str, *, pessimistic: bool = False) -> int:
    """The tokens of ``text`` (see ``tokens_for_chars``)."""
    return tokens_for_chars(len(text), pessimistic=pessimistic)


def _tools_chars(tools: tuple[ToolSchema, ...]) -> int:
    return sum(len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters)) for tool in tools)


def request_tokens(request: LLMRequest) -> int:
    """A bound on a whole request (system, turns with their framing, tool schemas), for sizing it."""
    chars = len(request.system) + sum(_framed_chars(turn) for turn in request.turns) + _tools_chars(request.tools)
    return tokens_for_chars(chars, pessimistic=True) + image_tokens(request)


def _framed_chars(turn: Turn) -> int:
    """A turn's characters with its framing (its ``repr``), counted once per turn."""
    return turn.derive("framed chars", partial(_repr_length, turn))


def _repr_length(value: object) -> int:
    return len(repr(value))


def image_tokens(request: LLMRequest) -> int:
    """What the images of ``request`` count for (``IMAGE_TOKENS`` each)."""
    return IMAGE_TOKENS * _images(request)


def _images(request: LLMRequest) -> int:
    """The images in ``request`` (an ``ImagePart``'s ``repr`` leaves its data out)."""
    return sum(
        len(result.images) for turn in request.turns if isinstance(turn, ToolResultsTurn) for result in turn.results
    )


def estimate_prompt_tokens(request: LLMRequest) -> int:
    """The prompt tokens of ``request`` as a provider would count the text it reads."""
    chars = len(request.system) + _tools_chars(request.tools)
    for turn in request.turns:
        if isinstance(turn, UserTurn):
            chars += len(turn.text)
        elif isinstance(turn, AssistantTurn):
            chars += sum(len(getattr(part, "text", "")) for part in turn.parts)
            chars += sum(len(call.name) + len(call.arguments) for call in turn.tool_calls)
        elif isinstance(turn, ToolResultsTurn):
            chars += sum(len(result.content) for result in turn.results)
    return tokens_for_chars(chars) + image_tokens(request)


def estimate_usage(request: LLMRequest, completion_chars: int) -> Usage:
    """The usage of a call to ``request`` that wrote ``completion_chars`` characters, marked estimated."""
    return Usage(
        prompt_tokens=estimate_prompt_tokens(request),
        completion_tokens=tokens_for_chars(completion_chars),
        estimated=True,
    )
