"""Domain errors, each with its HTTP status and Letta-shaped ``detail``.

Raised by services and the engine, mapped to HTTP once (the API's exception
handler) and to error frames by the WebSocket consumer.
"""

from __future__ import annotations

from core.errors import ApplicationError, Conflict, InvalidArgument, NotFound, ValidationFailed

__all__ = [
    "AgentBusy",
    "ApplicationError",
    "Conflict",
    "InvalidApprovalInput",
    "InvalidArgument",
    "InvalidToolCallIds",
    "NoPendingApproval",
    "NotFound",
    "PendingApprovalConflict",
    "ValidationFailed",
]


class NoPendingApproval(ApplicationError):
    status_code = 400
    default_detail = (
        "Cannot process approval response: No tool call is currently awaiting approval. "
        "Please send a regular message to interact with the agent."
    )


class PendingApprovalConflict(ApplicationError):
    status_code = 409

    def __init__(self, pending_request_id: str) -> None:
        super().__init__(
            {
                "code": "PENDING_APPROVAL",
                "message": (
                    "CONFLICT: Cannot send a new message: The agent is waiting for approval on a tool call. "
                    "Please approve or deny the pending request before continuing."
                ),
                "pending_request_id": pending_request_id,
            }
        )
        self.pending_request_id = pending_request_id


class InvalidToolCallIds(ApplicationError):
    status_code = 400

    def __init__(self, expected: list[str], received: list[str]) -> None:
        super().__init__(f"Invalid tool call IDs. Expected '{expected!r}', but received '{received!r}'.")
        self.expected = expected
        self.received = received


class InvalidApprovalInput(ApplicationError):
    status_code = 400


class AgentBusy(ApplicationError):
    status_code = 409
    default_detail = (
        "CONFLICT: Another run is already in progress for this agent. "
        "Wait for it to finish or cancel it, then try again."
    )
