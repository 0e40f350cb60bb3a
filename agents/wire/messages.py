"""The projection from our rows to Letta's LettaMessages (``letta-client==0.1.324`` types).

Every endpoint, the SSE streams and the chat render through these functions, so a
message looks the same in a blocking response, a stream and ``messages.list``. Field
names, key order and value formats follow a real Letta 0.13.0 server
(``shared/letta-wire``); where Letta is inconsistent we pick one rule:

- every LettaMessage of a row carries the row's id; parts of an assistant row get
  ``otid = part_otid(row id, index)``, user and approval rows echo the stored otid;
- ``is_err`` is ``true`` or ``null`` (never ``false``), ``sender_id`` is ``null``, and ``seq_id``
  is ``null`` except in streams (``agents.wire.stream``).

The shapes are ``TypedDict``s: the functions build plain dicts, ready for JSON, and the
types let mypy check them and ``agents.api.openapi`` document them (``typing_extensions``'
``TypedDict``, the one pydantic reads on Python 3.11).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, NotRequired, TypeAlias, TypeVar, cast

from pydantic import Field
from typing_extensions import TypedDict

from agents.engine.compaction import summary_from_text
from agents.engine.types import ToolStatus, Transport
from agents.models import MessageRole
from agents.wire.values import DateTime, letta_date, part_otid

# Also imported from here, where they used to live.
from agents.wire.values import letta_timestamp as letta_timestamp
from agents.wire.values import public_id as public_id
from tools import elicitation

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

Kind = TypeVar("Kind", bound=str)


# --- the shapes ---------------------------------------------------------------------------


class ToolCall(TypedDict):
    name: str
    arguments: str | None
    """The JSON text of the arguments; in a stream, a fragment of it (``null`` on a call's first chunk)."""
    tool_call_id: str


class _Audit(TypedDict, total=False):
    """Who decided an approval item, when and how (items stored before the audit have none of these)."""

    decided_by: str
    decided_by_user_id: int | None
    decided_by_api_key_id: int | None
    decided_at: DateTime
    transport: Transport


class _ToolResult(TypedDict):
    tool_return: Any
    """The return as text; in ``approvals``, as the client sent it."""
    status: ToolStatus
    tool_call_id: str
    stdout: list[str] | None
    stderr: list[str] | None


class ToolReturn(_Audit, _ToolResult):
    """Letta's ``ToolReturn``: an item of ``tool_returns``, or of ``approvals`` for a client's result."""

    type: Literal["tool"]


class ApprovalReturn(_Audit):
    """Letta's ``ApprovalReturn``: a person's decision on one gated call (the edit only on audited items)."""

    type: Literal["approval"]
    tool_call_id: str
    approve: bool
    reason: str | None
    original_arguments: NotRequired[dict[str, Any] | None]
    arguments: NotRequired[dict[str, Any] | None]
    always_allow: NotRequired[bool]


class _LettaMessage(TypedDict):
    id: str
    date: DateTime
    name: str | None
    otid: str | None
    sender_id: str | None
    step_id: str | None
    is_err: Literal[True] | None
    seq_id: int | None
    """Where a stream chunk ends (``agents.wire.stream``); ``null`` outside streams."""
    run_id: str | None


class MessageHeader(_LettaMessage, Generic[Kind]):
    """The fields every LettaMessage starts with (``message_header`` puts them in Letta's order)."""

    message_type: Kind


class SystemMessage(_LettaMessage):
    message_type: Literal["system_message"]
    content: str


class UserMessage(_LettaMessage):
    message_type: Literal["user_message"]
    content: str | list[dict[str, Any]]
    """The text, or the content parts when there is more than one text."""


class ReasoningMessage(_LettaMessage):
    message_type: Literal["reasoning_message"]
    source: Literal["reasoner_model"]
    reasoning: str
    signature: str | None


class HiddenReasoningMessage(_LettaMessage):
    message_type: Literal["hidden_reasoning_message"]
    state: Literal["redacted"]
    hidden_reasoning: str | None


class AssistantMessage(_LettaMessage):
    message_type: Literal["assistant_message"]
    content: str


class _CallsMessage(_LettaMessage):
    tool_call: ToolCall
    """The first call; in a stream, the call (or the piece of it) this chunk carries."""
    tool_calls: list[ToolCall] | None
    """Every call of the message; ``null`` in stream chunks."""


class ToolCallMessage(_CallsMessage):
    message_type: Literal["tool_call_message"]


class ApprovalRequestMessage(_CallsMessage):
    message_type: Literal["approval_request_message"]
    elicitations: NotRequired[list[dict[str, Any]]]
    """This server's addition, only on calls that asked the person for input (``tools.elicitation``): per call
    ``tool_call_id``, ``server``, ``message``, ``requested_schema`` and the form's ``fields``."""


class ToolReturnMessage(_LettaMessage, _ToolResult):
    """The first return's fields, then every return of the row in ``tool_returns``."""

    message_type: Literal["tool_return_message"]
    tool_returns: list[ToolReturn]


ApprovalItem: TypeAlias = Annotated[ApprovalReturn | ToolReturn, Field(discriminator="type")]


class ApprovalResponseMessage(_LettaMessage):
    message_type: Literal["approval_response_message"]
    approvals: list[ApprovalItem]
    approve: bool | None
    approval_request_id: str | None
    reason: str | None


class EventMessage(_LettaMessage):
    """letta-client 1.x: a compaction happened (``include_compaction_messages``)."""

    message_type: Literal["event_message"]
    event_type: Literal["compaction"]
    event_data: dict[str, Any]


class SummaryMessage(_LettaMessage):
    """letta-client 1.x: the summary a compaction wrote (``include_compaction_messages``)."""

    message_type: Literal["summary_message"]
    summary: str
    compaction_stats: dict[str, Any] | None


LettaMessage: TypeAlias = Annotated[
    SystemMessage
    | UserMessage
    | ReasoningMessage
    | HiddenReasoningMessage
    | AssistantMessage
    | ToolCallMessage
    | ApprovalRequestMessage
    | ToolReturnMessage
    | ApprovalResponseMessage
    | EventMessage
    | SummaryMessage,
    Field(discriminator="message_type"),
]
"""Any LettaMessage; ``message_type`` tells which."""


# --- the parts ----------------------------------------------------------------------------


def message_header(row: Any, message_type: Kind, otid: str | None) -> MessageHeader[Kind]:
    """The header of a LettaMessage of ``row`` (a ``Message``, or anything with its header attributes)."""
    return {
        "id": public_id("message", row.id) or "",
        "date": letta_date(getattr(row, "created_at", None)),
        "name": getattr(row, "name", "") or None,
        "message_type": message_type,
        "otid": otid,
        "sender_id": None,
        "step_id": public_id("step", getattr(row, "step_id", None)),
        "is_err": True if getattr(row, "is_err", False) else None,
        "seq_id": None,
        "run_id": public_id("run", getattr(row, "run_id", None)),
    }


def reasoning_message(row: Any, otid: str, reasoning: str, signature: str | None) -> ReasoningMessage:
    return {
        **message_header(row, "reasoning_message", otid),
        "source": "reasoner_model",
        "reasoning": reasoning,
        "signature": signature,
    }


def assistant_message(row: Any, otid: str, content: str) -> AssistantMessage:
    return {**message_header(row, "assistant_message", otid), "content": content}


def calls_message(
    row: Any, otid: str, *, gated: bool, tool_call: ToolCall, tool_calls: list[ToolCall] | None
) -> ToolCallMessage | ApprovalRequestMessage:
    """The ``approval_request_message`` (``gated``) or ``tool_call_message`` of some calls of ``row``."""
    if gated:
        request: ApprovalRequestMessage = {
            **message_header(row, "approval_request_message", otid),  # type: ignore[typeddict-item]  # NotRequired
            "tool_call": tool_call,
            "tool_calls": tool_calls,
        }
        return request
    return {**message_header(row, "tool_call_message", otid), "tool_call": tool_call, "tool_calls": tool_calls}


def wire_tool_call(call: Any) -> ToolCall:
    """A stored call (``StoredToolCall``) as Letta's ``ToolCall``.

    Stored items are read with ``.get`` here and below: a row stored before a field existed lacks it.
    """
    return {"name": call.get("name"), "arguments": call.get("arguments"), "tool_call_id": call.get("id")}


def wire_tool_return(item: Any) -> ToolReturn:
    """A stored result as an item of ``tool_returns`` (and of ``approvals`` for client-side results)."""
    return {
        "type": "tool",
        "tool_return": item.get("tool_return"),
        "status": item.get("status"),
        "tool_call_id": item.get("tool_call_id"),
        "stdout": item.get("stdout"),
        "stderr": item.get("stderr"),
    }


def _audit(item: Any) -> _Audit:
    """Who, when and how (``decided_at`` marks an audited item); nothing for items stored before the audit."""
    if "decided_at" not in item:
        return {}
    return {
        "decided_by": item.get("decided_by"),
        "decided_by_user_id": item.get("decided_by_user_id"),
        "decided_by_api_key_id": item.get("decided_by_api_key_id"),
        "decided_at": item.get("decided_at"),
        "transport": item.get("transport"),
    }


def wire_approval(item: Any) -> ApprovalReturn | ToolReturn:
    """A stored approval decision as Letta's ``ApprovalReturn`` / ``ToolReturn`` item.

    The audit (who, when, how) and, on decisions, the edit (``original_arguments``,
    ``arguments``, ``always_allow``) follow Letta's fields; Letta clients ignore them.
    Items stored before the audit existed have none of them and show exactly Letta's fields.
    """
    audit = _audit(item)
    if item.get("type") == "tool":
        return {**wire_tool_return(item), **audit}
    decision: ApprovalReturn = {
        "type": "approval",
        "tool_call_id": item.get("tool_call_id"),
        "approve": item.get("approve"),
        "reason": item.get("reason"),
    }
    if not audit:
        return decision
    edit: ApprovalReturn = {
        **decision,
        **audit,
        "original_arguments": item.get("original_arguments"),
        "arguments": item.get("arguments"),
        "always_allow": bool(item.get("always_allow")),
    }
    return edit


def _text_of(content: Iterable[dict[str, Any]]) -> str:
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


# --- rows ---------------------------------------------------------------------------------


def _assistant_messages(row: Any) -> list[LettaMessage]:
    messages: list[LettaMessage] = []
    for part in row.content or []:
        kind, otid = part.get("type"), part_otid(row.id, len(messages))
        if kind == "reasoning":
            messages.append(reasoning_message(row, otid, part.get("text", ""), part.get("signature")))
        elif kind == "redacted_reasoning":
            hidden: HiddenReasoningMessage = {
                **message_header(row, "hidden_reasoning_message", otid),
                "state": "redacted",
                "hidden_reasoning": part.get("data"),
            }
            messages.append(hidden)
        elif kind == "text" and part.get("text"):
            messages.append(assistant_message(row, otid, part["text"]))
    calls = list(row.tool_calls or [])
    for gated in (False, True):
        batch = [wire_tool_call(c) for c in calls if bool(c.get("requires_approval")) is gated]
        if batch:
            otid = part_otid(row.id, len(messages))
            message = calls_message(row, otid, gated=gated, tool_call=batch[0], tool_calls=batch)
            asked = [wire_elicitation(c) for c in calls if gated and c.get("elicitation")]
            messages.append(message | {"elicitations": asked} if asked else message)  # type: ignore[arg-type]
    return messages


def wire_elicitation(call: Any) -> dict[str, Any]:
    """What a call asked the person (``StoredToolCall.elicitation``), with the form a page shows for it."""
    asked = call.get("elicitation") or {}
    schema = asked.get("requested_schema") or {}
    return {
        "tool_call_id": call.get("id"),
        "server": asked.get("server"),
        "message": asked.get("message"),
        "requested_schema": schema,
        "fields": asked.get("fields") or elicitation.form_fields(schema),
    }


def _tool_return_message(row: Any) -> list[LettaMessage]:
    returns = [wire_tool_return(item) for item in row.tool_returns or []]
    if not returns:
        return []
    first = returns[0]
    message: ToolReturnMessage = {
        **message_header(row, "tool_return_message", part_otid(row.id, 0)),
        "tool_return": first["tool_return"],
        "status": first["status"],
        "tool_call_id": first["tool_call_id"],
        "stdout": first["stdout"],
        "stderr": first["stderr"],
        "tool_returns": returns,
    }
    return [message]


def _approval_response_message(row: Any) -> list[LettaMessage]:
    approvals = [wire_approval(item) for item in row.approvals or []]
    # The legacy fields describe approvals[0], and only when it is an approve/deny decision.
    first = approvals[0] if approvals else None
    decision = first if first is not None and first["type"] == "approval" else None
    message: ApprovalResponseMessage = {
        **message_header(row, "approval_response_message", row.otid or None),
        "approvals": approvals,
        "approve": decision["approve"] if decision else None,
        "approval_request_id": decision["tool_call_id"] if decision else None,
        "reason": decision["reason"] if decision else None,
    }
    return [message]


def _user_content(content: Sequence[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if all(part.get("type") == "text" for part in content) and len(content) <= 1:
        return _text_of(content)
    return [dict(part) for part in content]


def letta_messages_for_row(row: Any) -> list[LettaMessage]:
    """The LettaMessages one row shows as, in wire order; all share the row's id.

    ``row`` is a ``Message`` or anything with its attributes (``id``, ``role``, ``content``,
    ``tool_calls``, ``tool_returns``, ``approvals``, ``otid``, ``name``, ``run_id``,
    ``step_id``, ``is_err``, ``created_at``). An assistant row gives its reasoning and
    text parts in content order, then one ``tool_call_message`` for the calls that run
    freely, then one ``approval_request_message`` for the calls that wait for a human.
    """
    role = row.role
    if role == MessageRole.ASSISTANT:
        return _assistant_messages(row)
    if role == MessageRole.TOOL:
        return _tool_return_message(row)
    if role == MessageRole.APPROVAL:
        return _approval_response_message(row)
    if role == MessageRole.USER:
        user: UserMessage = {
            **message_header(row, "user_message", row.otid or None),
            "content": _user_content(row.content or []),
        }
        return [user]
    if role == MessageRole.SYSTEM:
        system: SystemMessage = {
            **message_header(row, "system_message", row.otid or None),
            "content": _text_of(row.content or []),
        }
        return [system]
    return []


def letta_messages(rows: Iterable[Any]) -> list[LettaMessage]:
    return [message for row in rows for message in letta_messages_for_row(row)]


def row_text(row: Any) -> str:
    """The text parts of a row, joined."""
    return _text_of(row.content or [])


def row_kind(row: Any) -> str:
    """``login_notice`` for the login message that opens a conversation (Letta's ``{"type": "login"}``
    user row), ``summary`` for a compaction's summary, ``message`` for every other row."""
    if (row.metadata or {}).get("kind") == "summary":
        return "summary"
    if row.role != MessageRole.USER or len(row.content or []) != 1:
        return "message"
    text = _text_of(row.content)
    if not text.startswith("{"):
        return "message"
    try:
        parsed = json.loads(text)
    except ValueError:
        return "message"
    return "login_notice" if isinstance(parsed, dict) and parsed.get("type") == "login" else "message"


def compaction_messages(row: Any) -> list[dict[str, Any]]:
    """A compaction's summary row as letta-client 1.x's ``event_message`` (``event_type: "compaction"``) and
    ``summary_message``, both with the row's id and Letta's ``compaction_stats``."""
    stats = (row.metadata or {}).get("compaction_stats")
    return [
        message_header(row, "event_message", part_otid(row.id, 0))
        | {"event_type": "compaction", "event_data": stats or {}},
        message_header(row, "summary_message", part_otid(row.id, 1))
        | {"summary": summary_from_text(row_text(row)), "compaction_stats": stats},
    ]


def approval_request(row: Any) -> dict[str, Any] | None:
    """The ``approval_request_message`` (``ApprovalRequestMessage``) of an assistant row whose calls wait
    for a human, if any."""
    if row is None:
        return None
    messages = letta_messages_for_row(row)
    return cast(
        "dict[str, Any] | None", next((m for m in messages if m["message_type"] == "approval_request_message"), None)
    )
