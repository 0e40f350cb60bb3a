"""What a turn is asked to do, parsed once at the edge.

``TurnRequest`` is Letta's ``LettaRequest`` (the body of ``POST …/messages``,
``/stream`` and ``/async``) as one pydantic family. The REST views, the chat's
WebSocket frames and the OpenAPI schema all use it, so a request has one set of
limits wherever it comes from. ``TurnRequest.turn_input()`` gives the engine its
input: user messages, one approval answer, or "step again".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StrictInt,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from agents.errors import InvalidApprovalInput, ValidationFailed

MAX_MESSAGE_CHARS = 100_000
MAX_MESSAGES = 100
MAX_APPROVALS = 100
MAX_REASON_CHARS = 10_000
MAX_ID_CHARS = 200
MAX_OTID_CHARS = 64

MessageText = Annotated[str, Field(max_length=MAX_MESSAGE_CHARS)]
Otid = Annotated[str | None, Field(default=None, max_length=MAX_OTID_CHARS, description="Makes a resend idempotent.")]
ToolCallId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
Reason = Annotated[str | None, Field(default=None, max_length=MAX_REASON_CHARS)]


LettaMessageType = Literal[
    "system_message",
    "user_message",
    "assistant_message",
    "reasoning_message",
    "hidden_reasoning_message",
    "tool_call_message",
    "tool_return_message",
    "approval_request_message",
    "approval_response_message",
    "summary_message",
    "event_message",
]
"""The values of ``include_return_message_types`` (Letta's ``MessageType``); anything else is a 422."""


class RequestModel(BaseModel):
    # Letta clients send fields we do not use (``sender_id``, ``batch_item_id`` …): accepted, ignored.
    model_config = ConfigDict(extra="ignore", frozen=True)


class TextPart(RequestModel):
    type: Literal["text"] = "text"
    text: MessageText


class MessageCreate(RequestModel):
    """A user (or system) message; ``content`` is a string or a list of text parts."""

    type: Literal["message"] | None = "message"
    role: Literal["user", "system"] = "user"
    content: MessageText | Annotated[list[TextPart], Field(max_length=MAX_MESSAGES)]
    otid: Otid = None

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(part.text for part in self.content)


class ApprovalItem(RequestModel):
    """Approve or deny one pending call (Letta's ``ApprovalReturn``).

    Two extensions a Letta client never sends (DESIGN §13), both only with ``approve: true``:
    ``arguments`` runs the call with these arguments instead of the model's (checked against
    the tool's schema), and ``always_allow`` also stops asking for this tool on this agent.
    """

    type: Literal["approval"] = "approval"
    tool_call_id: ToolCallId
    approve: StrictBool
    reason: Reason = None
    arguments: dict[str, Any] | None = Field(
        default=None, description="Run the call with these arguments instead of the model's (approve only)."
    )
    always_allow: StrictBool | None = Field(
        default=None, description="Approve, and stop asking for approval of this tool on this agent (approve only)."
    )

    @field_validator("arguments", "always_allow")
    @classmethod
    def _only_when_approving(cls, value: Any, info: ValidationInfo) -> Any:
        if value not in (None, False) and info.data.get("approve") is not True:
            raise ValueError(f"'{info.field_name}' is only allowed when 'approve' is true.")
        return value


class ToolReturnItem(RequestModel):
    """The result of a call the client ran itself (Letta's ``ToolReturn``)."""

    type: Literal["tool"]
    tool_call_id: ToolCallId
    tool_return: Annotated[str, Field(max_length=MAX_MESSAGE_CHARS)] | list[Any] | dict[str, Any]
    status: Literal["success", "error"] = "success"
    stdout: list[str] | None = None
    stderr: list[str] | None = None


ApprovalAnswer = Annotated[ApprovalItem | ToolReturnItem, Field(discriminator="type")]


class ClientToolReturn(ToolReturnItem):
    """An item of ``tool_returns``: 1.x may leave out its ``type``."""

    type: Literal["tool"] = "tool"


class ToolReturnCreate(RequestModel):
    """Results of client-side tools (1.x): answers the pending calls as ``approvals`` of type ``tool`` do."""

    type: Literal["tool_return"] = "tool_return"
    tool_returns: Annotated[list[ClientToolReturn], Field(min_length=1, max_length=MAX_APPROVALS)]


class ClientTool(RequestModel):
    """A tool the caller runs itself, declared on the request; the model's calls to it wait for a ``tool_return``."""

    name: Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS, pattern=r"^[A-Za-z0-9_-]+$")]
    description: Annotated[str, Field(max_length=MAX_MESSAGE_CHARS)] | None = None
    parameters: dict[str, Any] | None = None


class ClientSkill(RequestModel):
    """A skill the caller offers (Letta's ``client_skills`` item): listed in the system prompt of this request only."""

    name: Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
    description: Annotated[str, Field(max_length=MAX_MESSAGE_CHARS)]
    location: Annotated[str, Field(max_length=MAX_MESSAGE_CHARS)]


class ApprovalCreate(RequestModel):
    """The answer to a pending batch; ``approvals`` wins over the legacy single-decision fields."""

    type: Literal["approval"] = "approval"
    approvals: Annotated[list[ApprovalAnswer], Field(max_length=MAX_APPROVALS)] | None = None
    approve: StrictBool | None = None
    approval_request_id: Annotated[str, Field(max_length=MAX_ID_CHARS)] | None = None
    reason: Reason = None


def _message_kind(value: Any) -> str:
    """1.x never adds a ``type`` to a message dict: inferred from ``approvals``, ``approve``, ``tool_returns``."""
    if isinstance(value, dict):
        if value.get("type") == "tool_return" or "tool_returns" in value:
            return "tool_return"
        is_approval = value.get("type") == "approval" or "approvals" in value or "approve" in value
        return "approval" if is_approval else "message"
    if isinstance(value, ToolReturnCreate):
        return "tool_return"
    return "approval" if isinstance(value, ApprovalCreate) else "message"


RequestMessage = Annotated[
    Annotated[MessageCreate, Tag("message")]
    | Annotated[ApprovalCreate, Tag("approval")]
    | Annotated[ToolReturnCreate, Tag("tool_return")],
    Discriminator(_message_kind),
]


class TurnRequest(RequestModel):
    """Input of a turn: user messages, one approval answer (then user messages), or ``[]`` to step again."""

    messages: Annotated[list[RequestMessage], Field(max_length=MAX_MESSAGES)] | None = None
    input: MessageText | None = Field(default=None, description="A single user message (letta-client 1.x).")
    max_steps: Annotated[StrictInt, Field(ge=1, le=1000)] | None = None
    streaming: StrictBool | None = Field(
        default=None, description="Answer ``POST …/messages`` as an SSE stream, as ``/messages/stream`` does."
    )
    stream_tokens: StrictBool | None = Field(default=None, description="One event per model delta (streams).")
    include_pings: StrictBool | None = Field(default=None, description="Ping events instead of keep-alive comments.")
    background: StrictBool | None = Field(default=None, description="Run in a worker; the stream follows the run.")
    use_assistant_message: StrictBool | None = Field(default=None, description="Accepted for compatibility.")
    include_return_message_types: list[LettaMessageType] | None = Field(
        default=None,
        description="Only messages of these types are returned or streamed; stop reasons, usage, pings and errors "
        "always are.",
    )
    include_compaction_messages: StrictBool | None = Field(
        default=None, description="A compaction shows as ``event_message`` + ``summary_message`` (letta-client 1.x)."
    )
    enable_thinking: str | None = Field(default=None, description="Accepted for compatibility.")
    client_tools: Annotated[list[ClientTool], Field(max_length=MAX_MESSAGES)] | None = Field(
        default=None, description="Tools the caller runs itself; answer their calls with a ``tool_return`` message."
    )
    client_skills: Annotated[list[ClientSkill], Field(max_length=MAX_MESSAGES)] | None = Field(
        default=None, description="Skills listed in the system prompt (Letta's ``<available_skills>``); not stored."
    )

    @model_validator(mode="after")
    def _one_kind_of_input(self) -> TurnRequest:
        if self.messages is None and self.input is None:
            raise ValueError("Field required: send 'messages' (or 'input').")
        return self

    def check_order(self) -> None:
        """Letta's rule on what may follow what (LETTA_CONVERSATIONS §2): an approval (or tool return)
        comes first and only user messages may follow it; after a user message, no approval.

        Letta drops a second approval after the first without a word; it is refused here (400),
        so nothing a client sent is lost unseen.
        """
        if not self.messages:
            return
        first, *rest = self.messages
        later = next((m for m in rest if not isinstance(m, MessageCreate)), None)
        if later is None:
            return
        if isinstance(first, ApprovalCreate | ToolReturnCreate):
            raise InvalidApprovalInput(
                "Only user messages may follow an approval (or tool return) in one request: "
                f"got a second {type(later).__name__}. Send one approval per request."
            )
        raise InvalidApprovalInput(f"Expected MessageCreate, got {type(later).__name__}")

    @classmethod
    def parse(cls, data: Any) -> TurnRequest:
        """Validate a request body, raising ``ValidationFailed`` (422, FastAPI's shape) when it is wrong."""
        if not isinstance(data, dict):
            raise ValidationFailed(
                [{"loc": ["body"], "msg": "The request body must be a JSON object.", "type": "dict_type"}]
            )
        try:
            request = cls.model_validate(data)
        except ValidationError as exc:
            raise ValidationFailed(validation_errors(exc, ["body"])) from None
        request.check_order()
        return request

    def stored(self) -> dict[str, Any]:
        """What a run keeps of its request, in a form ``parse`` reads back: no empty fields, but every
        ``type`` (unions are told apart by it, even when the request was built here, not sent)."""
        return self.model_dump(mode="json", exclude_none=True)

    def turn_input(self) -> TurnInput:
        messages = self.messages
        if messages is None:
            return [UserInput(text=self.input or "")]
        if not messages:
            return ContinueInput()
        first = messages[0]
        users = [UserInput(text=m.text, otid=m.otid or "") for m in messages if isinstance(m, MessageCreate)]
        if isinstance(first, ApprovalCreate):
            return ApprovalInput(
                approvals=list(first.approvals) if first.approvals is not None else None,
                approve=first.approve,
                approval_request_id=first.approval_request_id,
                reason=first.reason,
                follow_ups=tuple(users),
            )
        if isinstance(first, ToolReturnCreate):
            answers: list[ApprovalItem | ToolReturnItem] = list(first.tool_returns)
            return ApprovalInput(approvals=answers, follow_ups=tuple(users))
        return users


def validation_errors(exc: ValidationError, prefix: list[str | int]) -> list[dict[str, Any]]:
    """Pydantic's errors as FastAPI's ``[{"loc", "msg", "type"}]`` (what Letta answers with a 422)."""
    errors = []
    for error in exc.errors(include_url=False):
        # Tagged unions add the tag to the location; FastAPI's does not show it.
        loc = [
            part
            for part in error["loc"]
            if part not in ("message", "approval", "tool_return")
            and not (isinstance(part, str) and part.startswith("function-after["))
        ]
        message = error["msg"].removeprefix("Value error, ")
        errors.append({"loc": [*prefix, *loc], "msg": message, "type": error["type"]})
    return errors


@dataclass(frozen=True)
class UserInput:
    text: str
    otid: str = ""


@dataclass(frozen=True)
class ApprovalInput:
    approvals: list[ApprovalItem | ToolReturnItem] | None = None
    approve: bool | None = None
    approval_request_id: str | None = None
    reason: str | None = None
    follow_ups: tuple[UserInput, ...] = ()
    """User messages sent after the approval: persisted once it is applied, then the model is called."""

    @property
    def tool_call_ids(self) -> list[str]:
        """The calls this answer names (the legacy form names one only through ``approval_request_id``)."""
        if self.approvals:
            return [item.tool_call_id for item in self.approvals]
        return [self.approval_request_id] if self.approval_request_id else []


@dataclass(frozen=True)
class ContinueInput:
    """Step again without new input (after ``max_steps``, or to retry a failed turn)."""


TurnInput = list[UserInput] | ApprovalInput | ContinueInput
