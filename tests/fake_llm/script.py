"""What the fake server answers: provider-neutral scripted replies and injected faults.

Both round-trip through JSON so a separate server process can be scripted over HTTP.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

FinishReason = Literal["stop", "tool_calls", "length", "content_filter"]
FaultKind = Literal[
    "http_error",
    "prompt_too_long",
    "malformed_json",
    "drop_mid_stream",
    "no_terminal_event",
    "empty_completion",
    "error_event",
]
# The HTTP status a non-streamed request gets for an ``error_event`` fault.
_EVENT_STATUS = {"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500, "invalid_request_error": 400}
AUTO: Literal["auto"] = "auto"


@dataclass(frozen=True)
class Reply:
    """One model answer, rendered in whichever protocol the request used.

    ``delay`` is how many seconds the server stays silent before it answers (a slow model).
    ``finish_reason`` ``"auto"`` is ``tool_calls`` when there are calls, else ``stop``;
    ``None`` sends no finish reason at all. ``usage`` ``"auto"`` counts about four
    characters a token; ``None`` leaves usage out. On Anthropic, reasoning is sent
    as a signed thinking block only when the request enabled thinking (a default
    reasoning text is used if none is given); on OpenAI it is ``reasoning_content``.
    """

    text: str = ""
    reasoning: str | None = None
    tool_calls: Sequence[tuple[str, Mapping[str, Any]]] = ()
    finish_reason: FinishReason | Literal["auto"] | None = AUTO
    usage: tuple[int, int] | Literal["auto"] | None = AUTO
    redacted_reasoning: str | None = None
    delay: float = 0.0

    @property
    def resolved_finish_reason(self) -> FinishReason | None:
        if self.finish_reason == AUTO:
            return "tool_calls" if self.tool_calls else "stop"
        return self.finish_reason

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["tool_calls"] = [{"name": name, "arguments": dict(args)} for name, args in self.tool_calls]
        data["usage"] = list(self.usage) if isinstance(self.usage, tuple) else self.usage
        return {"type": "reply", **data}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reply:
        usage = data.get("usage", AUTO)
        return cls(
            text=data.get("text", ""),
            reasoning=data.get("reasoning"),
            tool_calls=tuple(_tool_call(call) for call in data.get("tool_calls", ())),
            finish_reason=data.get("finish_reason", AUTO),
            usage=(int(usage[0]), int(usage[1])) if isinstance(usage, list | tuple) else usage,
            redacted_reasoning=data.get("redacted_reasoning"),
            delay=float(data.get("delay", 0.0)),
        )


def _tool_call(call: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(call, Mapping):
        return str(call["name"]), dict(call.get("arguments") or {})
    name, arguments = call
    return str(name), dict(arguments)


@dataclass(frozen=True)
class Fault:
    """A failure to inject instead of a reply. Build one with the class methods."""

    kind: FaultKind
    status: int = 500
    message: str = "Internal server error"
    retry_after: float | None = None
    partial_text: str = ""
    error_type: str | None = None

    @classmethod
    def http(cls, status: int, message: str = "Injected failure", *, retry_after: float | None = None) -> Fault:
        return cls("http_error", status=status, message=message, retry_after=retry_after)

    @classmethod
    def server_error(cls) -> Fault:
        return cls.http(500, "Internal server error")

    @classmethod
    def overloaded(cls) -> Fault:
        return cls.http(529, "Overloaded")

    @classmethod
    def rate_limited(cls, retry_after: float | None = 1.0) -> Fault:
        return cls.http(429, "Rate limit exceeded", retry_after=retry_after)

    @classmethod
    def unauthorized(cls) -> Fault:
        return cls.http(401, "invalid x-api-key")

    @classmethod
    def prompt_too_long(cls) -> Fault:
        return cls("prompt_too_long", status=400, message="prompt is too long: 210000 tokens > 200000 maximum")

    @classmethod
    def malformed_json(cls) -> Fault:
        return cls("malformed_json", status=200)

    @classmethod
    def drop_mid_stream(cls, partial_text: str = "This answer is cut") -> Fault:
        """Starts answering (``partial_text``), then closes the connection mid-body."""
        return cls("drop_mid_stream", status=200, partial_text=partial_text)

    @classmethod
    def no_terminal_event(cls, partial_text: str = "") -> Fault:
        """A stream that ends cleanly with neither a finish reason nor a closing event."""
        return cls("no_terminal_event", status=200, partial_text=partial_text)

    @classmethod
    def empty_completion(cls) -> Fault:
        return cls("empty_completion", status=200)

    @classmethod
    def error_event(
        cls, error_type: str = "overloaded_error", message: str = "Overloaded", partial_text: str = ""
    ) -> Fault:
        """An error event inside a 200 stream, after ``partial_text`` if any.

        A non-streamed request gets the matching HTTP error instead.
        """
        status = _EVENT_STATUS.get(error_type, 500)
        return cls("error_event", status=status, message=message, partial_text=partial_text, error_type=error_type)

    def to_json(self) -> dict[str, Any]:
        return {"type": "fault", **asdict(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Fault:
        fields = {key: value for key, value in data.items() if key != "type"}
        return cls(**fields)


ScriptItem = Reply | Fault


def item_from_json(data: Mapping[str, Any]) -> ScriptItem:
    return Fault.from_json(data) if data.get("type") == "fault" else Reply.from_json(data)


def items_from_json(payload: Any) -> list[ScriptItem]:
    """``POST /__script__`` accepts a list of items or ``{"items": [...]}``."""
    items = payload.get("items", []) if isinstance(payload, Mapping) else payload
    return [item_from_json(item) for item in items]
