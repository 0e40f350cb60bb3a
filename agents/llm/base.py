"""The provider interface: a provider-neutral request in, a stream of typed events out.

The engine builds an ``LLMRequest`` from the conversation rows and reads the
events of ``LLMClient.generate``; providers translate both ways. Streaming and
non-streaming calls yield the same events (a non-streamed call yields the whole
answer at once), so the engine has one code path for both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

T = TypeVar("T")

# --- the request -------------------------------------------------------------


class Derived:
    """A frozen value that keeps what its readers derive from it (``derived``), so a value reused by
    every request (a window's rows and their turns, read once per process) is converted and sized once.

    ``cached_property`` keeps the store out of the dataclass's fields, equality, ``repr`` and ``replace``.
    """

    @cached_property
    def derived(self) -> dict[str, Any]:
        return {}

    def derive(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()``, once per object and ``key``."""
        store = self.derived
        if key not in store:
            store[key] = compute()
        return store[key]  # type: ignore[no-any-return]


@dataclass(frozen=True)
class TextPart:
    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True)
class ReasoningPart:
    text: str
    signature: str | None = None
    type: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True)
class RedactedReasoningPart:
    data: str
    type: Literal["redacted_reasoning"] = "redacted_reasoning"


ContentPart = TextPart | ReasoningPart | RedactedReasoningPart


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it


@dataclass(frozen=True)
class ImagePart:
    """An image for a model that takes images: base64 ``data`` (left out of ``repr``, so sizing never counts it)."""

    mime_type: str
    data: str = field(repr=False)
    type: Literal["image"] = "image"


@dataclass(frozen=True)
class ToolResult:
    tool_call_id: str
    name: str
    content: str
    is_error: bool = False
    images: tuple[ImagePart, ...] = ()
    """Images the call returned; only a model that takes images is given any."""


@dataclass(frozen=True)
class UserTurn(Derived):
    text: str
    role: Literal["user"] = "user"


@dataclass(frozen=True)
class AssistantTurn(Derived):
    parts: tuple[ContentPart, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True)
class ToolResultsTurn(Derived):
    results: tuple[ToolResult, ...]
    role: Literal["tool"] = "tool"


Turn = UserTurn | AssistantTurn | ToolResultsTurn


@dataclass(frozen=True)
class ToolSchema:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class LLMRequest:
    """Everything a provider needs for one call. ``model`` has no provider prefix."""

    model: str
    system: str
    turns: tuple[Turn, ...]
    tools: tuple[ToolSchema, ...] = ()
    temperature: float | None = None
    max_tokens: int | None = None
    parallel_tool_calls: bool = False
    reasoning: bool = False
    reasoning_budget_tokens: int = 0
    reasoning_effort: str | None = None
    # "auto" lets the model answer in text; "required" forces a tool call.
    tool_choice: Literal["auto", "required", "none"] = "auto"
    # What the call is for: a step of a turn, or summarizing evicted messages (a compaction).
    purpose: Literal["turn", "summary"] = "turn"


# --- the events --------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class ReasoningDelta:
    text: str
    type: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True)
class ReasoningSignature:
    """Closes the current reasoning block (Anthropic thinking signature)."""

    signature: str
    type: Literal["reasoning_signature"] = "reasoning_signature"


@dataclass(frozen=True)
class RedactedReasoning:
    data: str
    type: Literal["redacted_reasoning"] = "redacted_reasoning"


@dataclass(frozen=True)
class TextDelta:
    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True)
class ToolCallStart:
    index: int
    id: str
    name: str
    type: Literal["tool_call_start"] = "tool_call_start"


@dataclass(frozen=True)
class ToolCallArgumentsDelta:
    index: int
    fragment: str
    type: Literal["tool_call_arguments_delta"] = "tool_call_arguments_delta"


FinishReason = Literal["stop", "tool_calls", "length", "content_filter"]


@dataclass(frozen=True)
class Completed:
    """The last event of every successful call.

    ``finish_reason`` is ``None`` when the provider sent content but no finish
    reason (some compatible servers do); a stream that ends with neither content
    nor a terminal event raises ``LLMInvalidResponse`` instead.
    """

    finish_reason: FinishReason | None
    usage: Usage = field(default_factory=Usage)
    type: Literal["completed"] = "completed"


LLMEvent = (
    ReasoningDelta
    | ReasoningSignature
    | RedactedReasoning
    | TextDelta
    | ToolCallStart
    | ToolCallArgumentsDelta
    | Completed
)


# --- errors ------------------------------------------------------------------


class LLMError(Exception):
    """A model call failed. ``transport`` errors map to stop reason ``llm_api_error``,
    the others to ``invalid_llm_response``."""

    transport: bool = True
    retryable: bool = False

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class LLMAuthenticationError(LLMError):
    pass


class LLMRateLimited(LLMError):
    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None, status_code: int | None = 429) -> None:
        super().__init__(message, status_code=status_code)
        self.retry_after = retry_after


class LLMOverloaded(LLMError):
    retryable = True


class LLMConnectionError(LLMError):
    retryable = True


class LLMTimeout(LLMError):
    """The provider sent nothing within the first-byte timeout, or no whole answer within the total one.

    Not retried: a retry would multiply the wait the timeouts exist to bound."""


class LLMContextWindowExceeded(LLMError):
    pass


class LLMBadRequest(LLMError):
    pass


class LLMInvalidResponse(LLMError):
    """The provider answered, but not with something usable (malformed, empty, filtered, cut off)."""

    transport = False


# --- the client --------------------------------------------------------------


class LLMClient(Protocol):
    provider: str

    def generate(self, request: LLMRequest, *, stream: bool) -> AsyncIterator[LLMEvent]:
        """Call the model; yield its answer as events, ending with ``Completed``.

        Raises an ``LLMError`` subclass for every failure, never a vendor exception.
        """
        ...

    def build_payload(self, request: LLMRequest, *, stream: bool) -> dict[str, Any]:
        """The exact JSON body the vendor would receive (the dry run)."""
        ...
