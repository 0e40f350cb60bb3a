"""The memory built-ins (core memory, archival memory, ``conversation_search``): tools whose work is the
agent's own memory, so they live with it. ``tools.builtins`` offers them through ``TOOL_BUILTIN_SETS``."""
