"""Letta base tools this server cannot honestly perform yet.

They exist so that Letta clients find every name ``add-base-tools`` promises (same
names, tool types and parameters), but their descriptions say they are not available
and every call returns an error explaining why, rather than pretending to succeed.
They are never offered to a model: attaching one to an agent is refused
(``agents.services``), and migration 0004 detached any attached before.
"""

from __future__ import annotations

from typing import Any

from tools.base import ToolContext, ToolError
from tools.builtins.base import BuiltinTool, parameters, prop

MULTI_AGENT = "messaging between agents is not implemented on this server yet"
SLEEPTIME = "sleep-time and voice agents are not supported on this server"

_STRINGS = {"type": "array", "items": {"type": "string"}}
_AGENT_MESSAGE = {
    "message": prop("string", "The message to send."),
    "other_agent_id": prop("string", "The other agent's id."),
}


def _unavailable(
    name: str,
    tool_type: str,
    purpose: str,
    reason: str,
    properties: dict[str, Any],
    required: list[str],
    *,
    parallel: bool = False,
) -> BuiltinTool:
    async def run(arguments: dict[str, Any], context: ToolContext) -> None:
        raise ToolError(f"{name} is not available: {reason}.")

    return BuiltinTool(
        name=name,
        tool_type=tool_type,
        description=f"{purpose} NOT AVAILABLE on this server ({reason}); calling it returns an error.",
        parameters=parameters(properties, required),
        run=run,
        enable_parallel_execution=parallel,
        available=False,
    )


def unavailable_tools() -> list[BuiltinTool]:
    return [*_multi_agent_tools(), *_sleeptime_tools()]


def _multi_agent_tools() -> list[BuiltinTool]:
    return [
        _unavailable(
            "send_message_to_agent_and_wait_for_reply",
            "letta_multi_agent_core",
            "Send a message to another agent and wait for its reply.",
            MULTI_AGENT,
            _AGENT_MESSAGE,
            ["message", "other_agent_id"],
        ),
        _unavailable(
            "send_message_to_agent_async",
            "letta_multi_agent_core",
            "Send a message to another agent without waiting.",
            MULTI_AGENT,
            _AGENT_MESSAGE,
            ["message", "other_agent_id"],
        ),
        _unavailable(
            "send_message_to_agents_matching_tags",
            "letta_multi_agent_core",
            "Send a message to every agent with matching tags.",
            MULTI_AGENT,
            {
                "message": prop("string", "The message to send."),
                "match_all": {**_STRINGS, "description": "Tags an agent must all have."},
                "match_some": {**_STRINGS, "description": "Tags of which an agent must have at least one."},
            },
            ["message", "match_all", "match_some"],
        ),
    ]


def _sleeptime_tools() -> list[BuiltinTool]:
    return [
        _unavailable(
            "store_memories",
            "letta_voice_sleeptime_core",
            "Persist dialogue that is about to leave the context window.",
            SLEEPTIME,
            {
                "chunks": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "start_index": prop("integer", "First evicted line of the chunk."),
                            "end_index": prop("integer", "Last evicted line of the chunk (inclusive)."),
                            "context": prop("string", "A short paraphrase of the chunk, for retrieval."),
                        },
                        "required": ["start_index", "end_index", "context"],
                    },
                    "description": "The chunks to store.",
                }
            },
            ["chunks"],
        ),
        _unavailable(
            "rethink_user_memory",
            "letta_voice_sleeptime_core",
            "Rewrite the main agent's memory block.",
            SLEEPTIME,
            {"new_memory": prop("string", "The new contents of the block.")},
            ["new_memory"],
        ),
        _unavailable(
            "finish_rethinking_memory",
            "letta_voice_sleeptime_core",
            "Signal that rethinking memory is finished.",
            SLEEPTIME,
            {},
            [],
        ),
        _unavailable(
            "search_memory",
            "letta_voice_sleeptime_core",
            "Search long-term or earlier-conversation memory.",
            SLEEPTIME,
            {
                "convo_keyword_queries": {**_STRINGS, "description": "Keywords to look for."},
                "start_minutes_ago": prop("integer", "Start of the time window, in minutes ago."),
                "end_minutes_ago": prop("integer", "End of the time window, in minutes ago."),
            },
            [],
        ),
    ]
