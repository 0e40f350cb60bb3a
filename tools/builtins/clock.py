"""``get_current_time``: the date and time in a given time zone."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tools.base import ToolContext, ToolError
from tools.builtins.base import BuiltinTool, parameters, prop


async def _get_current_time(arguments: dict[str, Any], context: ToolContext) -> str:
    name = arguments.get("timezone") or "UTC"
    try:
        zone = ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolError(f"Unknown time zone {name!r}; use an IANA name such as 'Europe/Paris' or 'UTC'.") from None
    now = datetime.now(UTC).astimezone(zone)
    return f"{now.isoformat(timespec='seconds')} ({now:%A}, {name})"


GET_CURRENT_TIME = BuiltinTool(
    name="get_current_time",
    tool_type="letta_builtin",
    description="Get the current date and time, optionally in a given time zone.",
    parameters=parameters(
        {"timezone": prop("string", "IANA time zone name, e.g. 'Europe/Paris'. Defaults to UTC.")},
    ),
    run=_get_current_time,
    enable_parallel_execution=True,
)
