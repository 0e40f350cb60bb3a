"""``run_code``: run a Python snippet in the same sandbox as source tools.

Letta runs this on E2B in several languages; here it is Python only, with the
standard library, no network and no access to the agent's tool variables. The value
of a final expression comes back in ``results``, like a notebook cell.
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Any

from tools.base import ToolContext, ToolError
from tools.builtins.base import BuiltinTool, parameters, prop
from tools.sandbox.base import SandboxLimits
from tools.sandbox.selection import get_sandbox_backend
from tools.sandbox.slots import run_sandboxed

if TYPE_CHECKING:
    from tools.sandbox.base import SandboxBackend

LANGUAGES = ["python", "js", "ts", "r", "java"]


def run_code_tool(sandbox: SandboxBackend | None = None) -> BuiltinTool:
    """``sandbox`` defaults to the configured backend (``TOOL_SANDBOX_BACKEND``)."""

    async def run(arguments: dict[str, Any], context: ToolContext) -> dict[str, Any]:
        if arguments["language"] != "python":
            raise ToolError(f"run_code supports only python on this server, not {arguments['language']!r}.")
        backend = sandbox
        if backend is None:
            backend = await asyncio.to_thread(get_sandbox_backend)
        call = functools.partial(backend.execute, arguments["code"], None, {}, {}, SandboxLimits.from_settings())
        result = await run_sandboxed(call, organization_id=context.organization_id)
        if result.error_kind in {"sandbox", "busy"}:
            raise ToolError(result.error)
        return {
            "results": [result.value] if result.ok and result.value is not None else [],
            "logs": {
                "stdout": [result.stdout] if result.stdout else [],
                "stderr": [result.stderr] if result.stderr else [],
            },
            "error": None if result.ok else result.error,
        }

    return BuiltinTool(
        name="run_code",
        tool_type="letta_builtin",
        description=(
            "Run Python code in a sandbox (standard library only, no network). "
            "Returns stdout, stderr, the value of a final expression, and any error."
        ),
        parameters=parameters(
            {
                "code": prop("string", "The code to run."),
                "language": prop("string", "The language of the code; only python is supported.", enum=LANGUAGES),
            },
            required=["code", "language"],
        ),
        run=run,
        enable_parallel_execution=True,
    )
