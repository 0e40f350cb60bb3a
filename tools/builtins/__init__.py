"""Built-in server tools, listed explicitly in ``default_registry``.

Working: ``send_message``, ``run_code`` (Python, sandboxed), ``web_search`` and
``fetch_webpage`` (``tools.builtins.web``) and ``get_current_time`` (ours), plus the sets
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
from tools.builtins.messaging import SEND_MESSAGE
from tools.builtins.run_code import run_code_tool
from tools.builtins.unavailable import unavailable_tools
from tools.builtins.web import web_tools

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tools.sandbox.base import SandboxBackend

__all__ = ["BuiltinRegistry", "BuiltinTool", "default_registry"]


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
        ]
    )
