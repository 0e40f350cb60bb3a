"""Small builders shared by the tool tests."""

from __future__ import annotations

import json
import os
from typing import Any

from tools.base import ToolContext, ToolOutcome, ToolSpec
from tools.sandbox.base import SandboxLimits
from tools.schema import derive_tool_schema

# Short enough to keep the suite fast, long enough for a loaded 2-core machine.
FAST_LIMITS = SandboxLimits(wall_seconds=4.0, cpu_seconds=1)
# For the CPU limit to trip first even when other processes take most of the CPU.
CPU_BOUND_LIMITS = SandboxLimits(wall_seconds=30.0, cpu_seconds=1)
NO_CONTEXT = ToolContext(organization_id=None, agent_id=None)


def source_spec(source: str, *, kind: str = "source", return_char_limit: int = 50_000) -> ToolSpec:
    schema = derive_tool_schema(source)
    return ToolSpec(
        name=schema["name"],
        kind=kind,  # type: ignore[arg-type]
        json_schema=schema,
        source_code=source,
        return_char_limit=return_char_limit,
    )


def model_view(outcome: ToolOutcome) -> dict[str, Any]:
    """What the model reads: Letta's packaged ``{"status", "message", "time"}``."""
    return json.loads(outcome.func_response)


def processes_of_uid(uid: int) -> list[int]:
    """Live host pids whose real uid is ``uid`` (killed ones awaiting reaping by init do not count)."""
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:
            continue
        if int(fields["Uid"].split()[0]) == uid and not fields["State"].strip().startswith("Z"):
            pids.append(int(entry.name))
    return pids


# A tool that forks until the process limit refuses (each child sleeps): how many it forked, the refusal, its uid.
FORK_BOMB = """
def bomb() -> dict:
    import os, time
    forked = 0
    try:
        while True:
            if os.fork() == 0:
                time.sleep(120)
                os._exit(0)
            forked += 1
    except OSError as exc:
        return {"forked": forked, "error": exc.strerror, "uid": os.getuid()}
"""
