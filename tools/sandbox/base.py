"""The executor's interface: what a backend is given and what it returns.

A backend runs one call of Python source in isolation. ``function_name`` names the
function to call with ``arguments``; ``None`` runs the source as a script and returns
the ``repr`` of its last expression (what the ``run_code`` built-in needs). Backends
never raise for the tool's own failures: they come back as ``ok=False`` with a message
a model can act on and an ``error_kind`` for programs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from django.conf import settings

KiB = 1024
MiB = 1024 * KiB

ErrorKind = Literal[
    "",
    "exception",  # the tool raised; the message carries its type, text and line
    "timeout",  # wall-clock limit
    "cpu",  # CPU-time limit
    "memory",  # MemoryError under the address-space limit
    "output",  # stdout + stderr above the cap
    "result_size",  # the return value above the cap
    "serialization",  # the return value is not JSON-serializable
    "crashed",  # the process died without a result (signal, exit())
    "sandbox",  # the sandbox itself could not run the call
    "busy",  # too many calls running on this server or for this organization
]


@dataclass(frozen=True)
class SandboxLimits:
    """Per-call limits. ``from_settings`` reads the ``TOOL_SANDBOX_*`` Django settings."""

    wall_seconds: float = 10.0
    cpu_seconds: int = 5
    memory_bytes: int = 256 * MiB
    max_processes: int = 32
    max_file_bytes: int = 1 * MiB
    max_output_bytes: int = 64 * KiB
    max_result_bytes: int = 1 * MiB
    max_open_files: int = 256
    tmp_bytes: int = 64 * MiB
    network: bool = False

    @classmethod
    def from_settings(cls) -> SandboxLimits:
        defaults = cls()
        return cls(
            wall_seconds=float(getattr(settings, "TOOL_SANDBOX_WALL_SECONDS", defaults.wall_seconds)),
            cpu_seconds=int(getattr(settings, "TOOL_SANDBOX_CPU_SECONDS", defaults.cpu_seconds)),
            memory_bytes=int(getattr(settings, "TOOL_SANDBOX_MEMORY_BYTES", defaults.memory_bytes)),
            max_processes=int(getattr(settings, "TOOL_SANDBOX_MAX_PROCESSES", defaults.max_processes)),
            max_file_bytes=int(getattr(settings, "TOOL_SANDBOX_MAX_FILE_BYTES", defaults.max_file_bytes)),
            max_output_bytes=int(getattr(settings, "TOOL_SANDBOX_MAX_OUTPUT_BYTES", defaults.max_output_bytes)),
            max_result_bytes=int(getattr(settings, "TOOL_SANDBOX_MAX_RESULT_BYTES", defaults.max_result_bytes)),
            max_open_files=int(getattr(settings, "TOOL_SANDBOX_MAX_OPEN_FILES", defaults.max_open_files)),
            tmp_bytes=int(getattr(settings, "TOOL_SANDBOX_TMP_BYTES", defaults.tmp_bytes)),
            network=bool(getattr(settings, "TOOL_SANDBOX_NETWORK", defaults.network)),
        )

    def for_runner(self) -> dict[str, int]:
        """The limits the in-sandbox runner applies to itself with ``setrlimit``."""
        return {
            "cpu_seconds": self.cpu_seconds,
            "memory_bytes": self.memory_bytes,
            "max_processes": self.max_processes,
            "max_file_bytes": self.max_file_bytes,
            "max_open_files": self.max_open_files,
            "max_result_bytes": self.max_result_bytes,
        }


@dataclass(frozen=True)
class SandboxResult:
    ok: bool
    value: Any = None  # the return value, decoded from JSON (a str stays a str)
    error: str = ""
    error_kind: ErrorKind = ""
    stdout: str = ""
    stderr: str = ""
    duration_ms: int = 0


class SandboxBackend(Protocol):
    name: str

    async def execute(
        self,
        source_code: str,
        function_name: str | None,
        arguments: dict[str, Any],
        env: dict[str, str],
        limits: SandboxLimits,
    ) -> SandboxResult: ...


class UnavailableBackend:
    """Stands in when no sandbox can run here: every call is an error that says why."""

    name = "unavailable"

    def __init__(self, reason: str, notice: str = "") -> None:
        self.reason = reason
        self.notice = notice or reason
        """One line for operators (the start-up summary, the tools page); ``reason`` is what a call answers."""

    async def execute(
        self,
        source_code: str,
        function_name: str | None,
        arguments: dict[str, Any],
        env: dict[str, str],
        limits: SandboxLimits,
    ) -> SandboxResult:
        return SandboxResult(ok=False, error=self.reason, error_kind="sandbox")
