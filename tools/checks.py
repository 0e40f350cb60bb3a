"""``manage.py check --deploy``: warn when source tools have no sandbox or run without isolation."""

from __future__ import annotations

from typing import Any

from django.core.checks import Tags, Warning, register

from tools.sandbox.selection import UNSAFE_NO_ISOLATION, get_sandbox_backend


@register(Tags.security, deploy=True)
def check_tool_sandbox(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    backend = get_sandbox_backend()
    if backend.name == "unavailable":
        return [
            Warning(
                "Source tools are refused: no usable sandbox.",
                hint=getattr(backend, "reason", ""),
                id="tools.W001",
            )
        ]
    if backend.name == "process":
        return [
            Warning(
                f"TOOL_SANDBOX_BACKEND={UNSAFE_NO_ISOLATION}: tools run without isolation.",
                hint="World-readable files and the host's network are reachable from every tenant's tools.",
                id="tools.W002",
            )
        ]
    return []
