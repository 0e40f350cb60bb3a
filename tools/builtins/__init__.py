"""Built-in server tools, listed explicitly in ``default_registry``.

Working: ``send_message``, ``conversation_search``, the core memory tools
(``tools.builtins.memory``), archival memory (``tools.builtins.archival``), ``run_code``
(Python, sandboxed) and ``get_current_time`` (ours). Listed but answering with an honest
error: the rest of Letta's ``add-base-tools`` set (files, multi-agent, sleep-time and web
tools), see ``tools.builtins.unavailable``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.builtins.archival import ARCHIVAL_TOOLS
from tools.builtins.base import BuiltinRegistry, BuiltinTool
from tools.builtins.clock import GET_CURRENT_TIME
from tools.builtins.conversation_search import CONVERSATION_SEARCH
from tools.builtins.memory import MEMORY_TOOLS
from tools.builtins.messaging import SEND_MESSAGE
from tools.builtins.run_code import run_code_tool
from tools.builtins.unavailable import unavailable_tools

if TYPE_CHECKING:
    from tools.sandbox.base import SandboxBackend

__all__ = ["BuiltinRegistry", "BuiltinTool", "default_registry"]


def default_registry(*, sandbox: SandboxBackend | None = None) -> BuiltinRegistry:
    """Every built-in this server offers; ``sandbox`` is what ``run_code`` runs in."""
    return BuiltinRegistry(
        [
            SEND_MESSAGE,
            CONVERSATION_SEARCH,
            *MEMORY_TOOLS,
            *ARCHIVAL_TOOLS,
            run_code_tool(sandbox),
            GET_CURRENT_TIME,
            *unavailable_tools(),
        ]
    )
