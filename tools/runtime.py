"""``DefaultToolRunner``: the engine's one way to run a tool call.

A call goes: client tools are refused (the client answers them through approvals) →
the JSON arguments are parsed and validated against the tool's parameters (lossless
coercion only, ``tools.validation``) → built-ins run from the registry, source tools
in the sandbox, MCP tools through the caller ``settings.TOOL_MCP_CALLER`` names (the
``mcp_servers`` app, above this one) → the outcome is packaged for the model the way Letta does it.

``tool_return`` is the raw return value as text: a ``str`` as-is, ``None`` as
``"None"`` (Letta's ``str()``), anything else as JSON. A source tool that returns a
value JSON cannot represent gets an error result, never a ``repr``. ``func_response``
is what the model reads: ``{"status": "OK" | "Failed", "message": …, "time": …}`` with
the message cut to the tool's ``return_char_limit`` and a visible notice.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import logging
import re
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from django.conf import settings
from django.utils.module_loading import import_string

from tools.base import (
    MCPCaller,
    ReturnWithImages,
    Staged,
    ToolContext,
    ToolError,
    ToolInputRequired,
    ToolOutcome,
    ToolSpec,
)
from tools.builtins import BuiltinRegistry, default_registry
from tools.models import ApprovalPolicy
from tools.sandbox.base import SandboxBackend, SandboxLimits
from tools.sandbox.selection import get_sandbox_backend
from tools.sandbox.slots import run_sandboxed
from tools.validation import ArgumentError, validate_arguments

if TYPE_CHECKING:
    from tools.models import AgentTool

logger = logging.getLogger(__name__)

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: Seconds the argument check may take (it runs on a worker thread, never on the event loop).
VALIDATION_DEADLINE_SECONDS = 5.0


class DefaultToolRunner:
    """Implements ``tools.base.ToolRunner``. Collaborators default to the configured ones.

    ``sandbox`` defaults to ``TOOL_SANDBOX_BACKEND`` (resolved on first use), ``limits``
    to the ``TOOL_SANDBOX_*`` settings (read on every call), ``registry`` to every built-in.
    """

    def __init__(
        self,
        *,
        registry: BuiltinRegistry | None = None,
        sandbox: SandboxBackend | None = None,
        limits: SandboxLimits | None = None,
    ) -> None:
        self.registry = registry if registry is not None else default_registry(sandbox=sandbox)
        self.sandbox = sandbox
        self.limits = limits

    async def run(self, spec: ToolSpec, arguments: str, context: ToolContext) -> ToolOutcome:
        started = time.monotonic()
        if spec.kind == "client":
            return _failed(
                spec,
                started,
                f"{spec.name} is a client-side tool: the server never runs it. The client must supply its "
                "result through an approval response (a 'tool' return).",
            )
        try:
            parsed = await asyncio.wait_for(
                asyncio.to_thread(validate_arguments, spec.name, spec.parameters, arguments),
                timeout=VALIDATION_DEADLINE_SECONDS,
            )
        except ArgumentError as exc:
            return _failed(spec, started, str(exc))
        except TimeoutError:
            logger.warning("Checking the arguments of %s took longer than %s s", spec.name, VALIDATION_DEADLINE_SECONDS)
            return _failed(spec, started, f"Checking the arguments of {spec.name} took too long.")
        if spec.kind == "builtin":
            return await self._run_builtin(spec, parsed, context, started)
        if spec.kind == "source":
            return await self._run_source(spec, parsed, context, started)
        if spec.kind == "mcp":
            return await self._run_mcp(spec, parsed, context, started)
        # ``kind`` comes from a row (``tool_spec_for``); one written by another version may hold any value.
        return _failed(spec, started, f"{spec.name} has an unknown tool kind {spec.kind!r}.")  # type: ignore[unreachable]

    async def _run_builtin(
        self, spec: ToolSpec, arguments: dict[str, Any], context: ToolContext, started: float
    ) -> ToolOutcome:
        builtin = self.registry.get(spec.name)
        if builtin is None:
            return _failed(spec, started, f"The built-in tool {spec.name} is not available on this server.")
        seconds = builtin.wall_seconds() if builtin.wall_seconds is not None else self._limits().wall_seconds
        try:
            value = await asyncio.wait_for(builtin.run(arguments, context), timeout=seconds)
        except ToolError as exc:
            return _failed(spec, started, str(exc))
        except TimeoutError:
            return _failed(spec, started, f"{spec.name} did not finish within {seconds:g} s.")
        except Exception as exc:
            return _internal_error(spec, started, exc, kind="Built-in")
        if isinstance(value, Staged):
            return dataclasses.replace(_succeeded(spec, started, value.value), write=value.write)
        return _succeeded(spec, started, value)

    async def _run_source(
        self, spec: ToolSpec, arguments: dict[str, Any], context: ToolContext, started: float
    ) -> ToolOutcome:
        if not spec.source_code.strip():
            return _failed(spec, started, f"{spec.name} has no source code to run.")
        bad_env = next((name for name, value in context.env_vars.items() if not _valid_env(name, value)), None)
        if bad_env is not None:
            return _failed(
                spec,
                started,
                f"The agent's tool variable {bad_env!r} cannot be used: names are letters, digits and "
                "underscores, and values are text without NUL characters.",
            )
        sandbox = self.sandbox
        if sandbox is None:
            sandbox = await asyncio.to_thread(get_sandbox_backend)
        function_name = str(spec.json_schema.get("name") or spec.name)
        try:
            call = functools.partial(
                sandbox.execute, spec.source_code, function_name, arguments, dict(context.env_vars), self._limits()
            )
            result = await run_sandboxed(call, organization_id=context.organization_id)
        except Exception as exc:
            logger.exception("Sandbox backend %s failed on %s", getattr(sandbox, "name", "?"), spec.name)
            return _failed(spec, started, f"The sandbox failed to run {spec.name}: {type(exc).__name__}.")
        if result.ok:
            return _succeeded(spec, started, result.value, stdout=result.stdout, stderr=result.stderr)
        return _failed(spec, started, result.error, stdout=result.stdout, stderr=result.stderr)

    async def _run_mcp(
        self, spec: ToolSpec, arguments: dict[str, Any], context: ToolContext, started: float
    ) -> ToolOutcome:
        caller = _mcp_caller()
        if caller is None:
            return _failed(spec, started, f"{spec.name} is an MCP tool, and MCP servers are not enabled here.")
        try:
            value = await caller(spec, arguments, context)
        except ToolInputRequired:
            raise  # the engine asks the person and runs the call again (``agents.engine.batch``)
        except ToolError as exc:
            return _failed(spec, started, str(exc))
        except Exception as exc:
            return _internal_error(spec, started, exc, kind="MCP")
        if isinstance(value, ReturnWithImages):
            return dataclasses.replace(_succeeded(spec, started, value.text), images=value.images)
        return _succeeded(spec, started, value)

    def _limits(self) -> SandboxLimits:
        return self.limits if self.limits is not None else SandboxLimits.from_settings()


@functools.cache
def _mcp_caller() -> MCPCaller | None:
    path = getattr(settings, "TOOL_MCP_CALLER", "")
    return import_string(path) if path else None


@functools.cache
def _builtin_schemas() -> dict[str, dict[str, Any]]:
    return {builtin.name: builtin.json_schema for builtin in default_registry()}


def tool_spec_for(agent_tool: AgentTool) -> ToolSpec:
    """The engine's view of a tool attached to an agent (load it with ``select_related("tool")``).

    A built-in's schema comes from the code (``default_registry``), never from a row
    written by an older version of the server.
    """
    tool = agent_tool.tool
    policy = agent_tool.effective_policy
    schema = _builtin_schemas().get(tool.name) if tool.kind == "builtin" else None
    return ToolSpec(
        name=tool.name,
        kind=tool.kind,  # type: ignore[arg-type]  # a ToolKind value
        json_schema=schema or tool.json_schema,
        requires_approval=policy == ApprovalPolicy.ASK,
        approval_condition=agent_tool.approval_condition if policy == ApprovalPolicy.ASK_WHEN else "",
        return_char_limit=tool.return_char_limit,
        source_code=tool.source_code,
        tool_id=tool.public_id,
    )


def return_text(value: Any) -> str:
    """The raw return value as the wire's ``tool_return`` shows it."""
    if isinstance(value, str):
        return value
    if value is None:
        return "None"
    return json.dumps(value, ensure_ascii=False, default=str)


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [truncated: {len(text) - limit} more characters]"


def package_response(*, ok: bool, message: str, limit: int, now: datetime | None = None) -> str:
    """Letta's model-facing packaging of a tool result."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    payload = {
        "status": "OK" if ok else "Failed",
        "message": truncate(message, limit),
        "time": moment.strftime("%Y-%m-%d %I:%M:%S %p %Z%z"),
    }
    return json.dumps(payload, ensure_ascii=False)


def _succeeded(spec: ToolSpec, started: float, value: Any, *, stdout: str = "", stderr: str = "") -> ToolOutcome:
    return _outcome("success", spec, started, _clean(return_text(value)), stdout=stdout, stderr=stderr)


def _internal_error(spec: ToolSpec, started: float, exc: Exception, *, kind: str) -> ToolOutcome:
    """A tool's unexpected exception: logged with its traceback, and named (no details) to the model."""
    logger.exception("%s tool %s failed", kind, spec.name)
    return _failed(
        spec,
        started,
        f"Error executing function {spec.name}: an internal error ({type(exc).__name__}); "
        "the details are in the server log.",
    )


def _failed(spec: ToolSpec, started: float, message: str, *, stdout: str = "", stderr: str = "") -> ToolOutcome:
    return _outcome("error", spec, started, _clean(message), stdout=stdout, stderr=stderr)


def _outcome(
    status: Literal["success", "error"], spec: ToolSpec, started: float, text: str, *, stdout: str, stderr: str
) -> ToolOutcome:
    return ToolOutcome(
        status=status,
        tool_return=text,
        func_response=package_response(ok=status == "success", message=text, limit=spec.return_char_limit),
        stdout=[_clean(stdout)] if stdout else [],
        stderr=[_clean(stderr)] if stderr else [],
        duration_ms=int((time.monotonic() - started) * 1000),
    )


def _clean(text: str) -> str:
    """Replace lone surrogates (a tool can return them) so the text can be stored and sent as UTF-8."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _valid_env(name: object, value: object) -> bool:
    return isinstance(name, str) and bool(_ENV_NAME.match(name)) and isinstance(value, str) and "\x00" not in value
