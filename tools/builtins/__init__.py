"""Built-in server tools, listed explicitly in ``default_registry``.

Working: ``send_message``, ``run_code`` (Python, sandboxed), ``web_search`` and
``fetch_webpage`` (``tools.builtins.web``), ``get_current_time`` and the demo tools
``roll_dice`` and ``get_secret_code`` (``tools.builtins.demo``, outside the base set), plus the sets
``TOOL_BUILTIN_SETS`` names: the memory tools, which live with the memory they edit
(``agents.memory.tools``), and the file tools, with the files (``folders.tools``), so this
package needs nothing of ``agents``. Listed but answering with an honest error: the rest of
Letta's ``add-base-tools`` set (multi-agent and sleep-time tools), see ``tools.builtins.unavailable``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils.module_loading import import_string

from tools.builtins.base import BuiltinRegistry, BuiltinTool
from tools.builtins.clock import GET_CURRENT_TIME
from tools.builtins.demo import DEMO_TOOLS
from tools.builtins.messaging import SEND_MESSAGE
from tools.builtins.run_code import run_code_tool
from tools.builtins.unavailable import unavailable_tools
from tools.builtins.web import web_tools

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tools.sandbox.base import SandboxBackend

__all__ = ["DEMO_TOOLS", "BuiltinRegistry", "BuiltinTool", "base_registry", "default_registry"]


@cache
def _installed_sets(paths: tuple[str, ...]) -> tuple[BuiltinTool, ...]:
    found: list[BuiltinTool] = []
    for path in paths:
        tools: Sequence[BuiltinTool] = import_string(path)
        found.extend(tools)
    return tuple(found)


def default_registry(*, sandbox: SandboxBackend | None = None) -> BuiltinRegistry:
    """Every built-in this server offers; ``sandbox`` is what ``run_code`` runs in."""
    return BuiltinRegistry(
        [
            SEND_MESSAGE,
            *_installed_sets(tuple(settings.TOOL_BUILTIN_SETS)),
            run_code_tool(sandbox),
            GET_CURRENT_TIME,
            *unavailable_tools(),
            *web_tools(),
            *DEMO_TOOLS,
        ]
    )


def base_registry() -> BuiltinRegistry:
    """Letta's base set: what ``add-base-tools`` creates and a tool name at agent creation may mean."""
    return BuiltinRegistry(tool for tool in default_registry() if tool.in_base_set)
