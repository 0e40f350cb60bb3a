"""Core memory tools (Letta's names, arguments and messages): edit the calling agent's blocks.

A tool returns its edit staged (``tools.base.Staged``): the engine's store commits it in
the transaction that stores the call's result, so an edit never exists without its
result row, nor a result without its edit. The edit runs under a row lock on the block
(``agents.memory.services.memory_edit``), so two agents sharing a block never lose each
other's edits, and the next model call (this agent's or another's) sees it. A read-only
block, a value past the block's limit, an unknown label or a bad argument is an error
result; the block is left unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.db import transaction

from agents.memory import services
from agents.memory.services import BlockEditError, memory_edit
from tools.base import Staged, StaleWrite, ToolContext, ToolError
from tools.builtins.base import BuiltinTool, parameters, prop

LINE_NUMBER_PREFIX = re.compile(r"(^|\n)\d+→ ")
LINE_NUMBER_WARNING = "# NOTE: Line numbers shown below"
EDITED = (
    "The core memory block with label `{label}` has been edited. Review the changes and make sure they are as "
    "expected (correct indentation, no duplicate lines, etc). Edit the memory block again if necessary."
)


def _no_line_numbers(name: str, text: str) -> None:
    if LINE_NUMBER_PREFIX.search(text):
        raise ToolError(
            f"{name} contains a line number prefix, which is not allowed. Do not include line numbers when "
            "calling memory tools (line numbers are for display purposes only)."
        )
    if LINE_NUMBER_WARNING in text:
        raise ToolError(
            f"{name} contains a line number warning, which is not allowed. Do not include line number information "
            "when calling memory tools (line numbers are for display purposes only)."
        )


class _Rehearsed(Exception):
    """Ends a rehearsal's transaction, so nothing it did is kept."""


async def _stage(change: Callable[[Any], object], value: Any) -> Staged:
    """``change`` (ORM code given the tool row's id) as a staged write of a call that returns ``value``.

    The change is rehearsed first in a transaction that is rolled back, so a refusal (a
    ``BlockEditError``) is the call's error result; the store then runs it for real in the
    transaction that stores the result. Refused then, the data changed meanwhile: ``StaleWrite``,
    and the call runs again.
    """

    def rehearse() -> None:
        try:
            with transaction.atomic():
                change(None)
                raise _Rehearsed
        except _Rehearsed:
            pass
        except BlockEditError as exc:
            raise ToolError(str(exc)) from None

    def write(message_id: Any) -> None:
        try:
            change(message_id)
        except BlockEditError:
            raise StaleWrite() from None

    await sync_to_async(rehearse)()
    return Staged(value, write)


async def _edit(
    context: ToolContext, label: str, edit: Callable[[str], str], value: Any, *, create_missing: bool = False
) -> Staged:

    def change(message_id: Any) -> None:
        memory_edit(
            organization_id=context.organization_id,
            agent_id=context.agent_id,
            label=label,
            edit=edit,
            create_missing=create_missing,
            run_id=context.run_id,
            message_id=message_id,
            conversation_id=context.conversation_id,
        )

    return await _stage(change, value)


async def _memory_insert(arguments: dict[str, Any], context: ToolContext) -> Staged:
    line = arguments.get("insert_line")
    return await _insert(context, arguments["label"], str(arguments["new_str"]), -1 if line is None else int(line))


async def _insert(context: ToolContext, label: str, new_str: str, insert_line: int, *, name: str = "new_str") -> Staged:
    _no_line_numbers(name, new_str)

    def edit(value: str) -> str:
        current = value.expandtabs()
        if not current:
            return new_str.expandtabs()
        lines = current.split("\n")
        at = len(lines) if insert_line == -1 else insert_line
        if not 0 <= at <= len(lines):
            raise _block_error(
                f"Invalid `insert_line` parameter: {insert_line}. It should be within the range of lines of the "
                f"memory block: {[0, len(lines)]}, or -1 to append to the end of the memory block."
            )
        return "\n".join(lines[:at] + new_str.expandtabs().split("\n") + lines[at:])

    return await _edit(context, label, edit, EDITED.format(label=label))


async def _memory_replace(arguments: dict[str, Any], context: ToolContext) -> Staged:
    return await _replace(context, arguments["label"], str(arguments["old_str"]), str(arguments["new_str"]))


async def _replace(context: ToolContext, label: str, old_str: str, new_str: str) -> Staged:
    old_str, new_str = old_str.expandtabs(), new_str.expandtabs()
    _no_line_numbers("old_str", old_str)
    _no_line_numbers("new_str", new_str)

    def edit(value: str) -> str:
        current = value.expandtabs()
        occurrences = current.count(old_str) if old_str else 0
        if occurrences == 0:
            raise _block_error(
                f"No replacement was performed, old_str `{old_str}` did not appear verbatim in memory block with "
                f"label `{label}`."
            )
        if occurrences > 1:
            lines = [number for number, line in enumerate(current.split("\n"), start=1) if old_str in line]
            raise _block_error(
                f"No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines {lines}. "
                "Please ensure it is unique."
            )
        return current.replace(old_str, new_str)

    return await _edit(context, label, edit, EDITED.format(label=label))


async def _memory_rethink(arguments: dict[str, Any], context: ToolContext) -> Staged:
    label, new_memory = arguments["label"], str(arguments["new_memory"])
    _no_line_numbers("new_memory", new_memory)
    return await _edit(context, label, lambda _value: new_memory, EDITED.format(label=label), create_missing=True)


async def _memory_finish_edits(arguments: dict[str, Any], context: ToolContext) -> None:
    return None


async def _core_memory_append(arguments: dict[str, Any], context: ToolContext) -> Staged:
    content = str(arguments["content"])
    return await _edit(context, arguments["label"], lambda value: f"{value}\n{content}", None)


async def _core_memory_replace(arguments: dict[str, Any], context: ToolContext) -> Staged:
    label, old, new = arguments["label"], str(arguments["old_content"]), str(arguments["new_content"])

    def edit(value: str) -> str:
        if old not in value:
            raise _block_error(f"Old content '{old}' not found in memory block '{label}'")
        return value.replace(old, new)

    return await _edit(context, label, edit, None)


MEMORY_COMMANDS = ("create", "str_replace", "insert", "delete", "rename")


def _label_of(path: Any, name: str = "path") -> str:
    label = str(path or "").strip().removeprefix("/memories/").strip("/")
    if not label:
        raise ToolError(f"{name} is required: the block's path, e.g. '/memories/notes'.")
    return label


def _required(arguments: dict[str, Any], name: str, command: str) -> str:
    if arguments.get(name) is None:
        raise ToolError(f"The {command} command needs {name}.")
    return str(arguments[name])


async def _memory(arguments: dict[str, Any], context: ToolContext) -> Staged:
    command = arguments["command"]
    if command not in MEMORY_COMMANDS:
        raise ToolError(f"Unknown command {command!r}; use one of {', '.join(MEMORY_COMMANDS)}.")
    if command == "str_replace":
        label = _label_of(arguments.get("path"))
        old, new = _required(arguments, "old_str", command), _required(arguments, "new_str", command)
        return await _replace(context, label, old, new)
    if command == "insert":
        line = arguments.get("insert_line")
        text = _required(arguments, "insert_text", command)
        return await _insert(
            context, _label_of(arguments.get("path")), text, -1 if line is None else int(line), name="insert_text"
        )
    ids: dict[str, Any] = {"organization_id": context.organization_id, "agent_id": context.agent_id}
    if command == "create":
        label = _label_of(arguments.get("path"))
        text = str(arguments.get("file_text") or "")
        _no_line_numbers("file_text", text)
        description = str(arguments.get("description") or "")
        return await _stage(
            lambda message_id: services.memory_create_block(
                **ids, label=label, value=text, description=description, run_id=context.run_id, message_id=message_id
            ),
            f"Created the memory block '{label}'.",
        )
    if command == "delete":
        label = _label_of(arguments.get("path"))
        return await _stage(
            lambda _message_id: services.memory_delete_block(**ids, label=label),
            f"Deleted the memory block '{label}'.",
        )
    if arguments.get("old_path") or arguments.get("new_path"):
        old_label = _label_of(arguments.get("old_path"), "old_path")
        new_label = _label_of(arguments.get("new_path"), "new_path")
        return await _stage(
            lambda message_id: services.memory_relabel_block(
                **ids, label=old_label, new_label=new_label, run_id=context.run_id, message_id=message_id
            ),
            f"Renamed the memory block '{old_label}' to '{new_label}'.",
        )
    if arguments.get("description") is None:
        raise ToolError("The rename command needs old_path and new_path, or path and description.")
    label = _label_of(arguments.get("path"))
    description = str(arguments["description"])
    return await _stage(
        lambda message_id: services.memory_relabel_block(
            **ids, label=label, description=description, run_id=context.run_id, message_id=message_id
        ),
        f"Updated the description of the memory block '{label}'.",
    )


def _block_error(message: str) -> Exception:
    return BlockEditError(message)


def _label() -> dict[str, Any]:
    return prop("string", "Section of the memory to be edited, identified by its label.")


S = "string"
MEMORY_INSERT = BuiltinTool(
    name="memory_insert",
    tool_type="letta_sleeptime_core",
    description=(
        "The memory_insert command allows you to insert text at a specific location in a memory block.\n\n"
        'Examples: memory_insert(label="human", new_str="The user prefers tea.") appends a line; '
        'memory_insert(label="todo", new_str="- call mom", insert_line=0) inserts before the first line.'
    ),
    parameters=parameters(
        {
            "label": _label(),
            "new_str": prop(S, "The text to insert. Do not include line number prefixes."),
            "insert_line": prop(
                "integer",
                "The line number after which to insert the text (0 for the beginning of the block). "
                "Defaults to -1 (the end of the block).",
            ),
        },
        required=["label", "new_str"],
    ),
    run=_memory_insert,
)
MEMORY_REPLACE = BuiltinTool(
    name="memory_replace",
    tool_type="letta_sleeptime_core",
    description=(
        "The memory_replace command allows you to replace a specific string in a memory block with a new string. "
        "This is used for making precise edits. Do not include line number prefixes in old_str or new_str.\n\n"
        'Examples: memory_replace(label="human", old_str="Name: Al", new_str="Name: Alice"); '
        'memory_replace(label="todo", old_str="- buy milk\\n", new_str="") deletes a line.'
    ),
    parameters=parameters(
        {
            "label": _label(),
            "old_str": prop(S, "The text to replace (must match exactly, and occur exactly once)."),
            "new_str": prop(S, "The new text to insert in place of the old text."),
        },
        required=["label", "old_str", "new_str"],
    ),
    run=_memory_replace,
)
MEMORY_RETHINK = BuiltinTool(
    name="memory_rethink",
    tool_type="letta_sleeptime_core",
    description=(
        "The memory_rethink command allows you to completely rewrite the contents of a memory block. Use it for "
        "large sweeping changes; the block is created if it does not exist."
    ),
    parameters=parameters(
        {"label": _label(), "new_memory": prop(S, "The new memory contents, replacing the whole block.")},
        required=["label", "new_memory"],
    ),
    run=_memory_rethink,
)
MEMORY_FINISH_EDITS = BuiltinTool(
    name="memory_finish_edits",
    tool_type="letta_sleeptime_core",
    description="Call the memory_finish_edits command when you are finished making edits (integrating all new "
    "information) into the memory blocks.",
    parameters=parameters({}),
    run=_memory_finish_edits,
)
CORE_MEMORY_APPEND = BuiltinTool(
    name="core_memory_append",
    tool_type="letta_memory_core",
    description="Append to the contents of core memory.",
    parameters=parameters(
        {"label": _label(), "content": prop(S, "Content to write to the memory. All unicode is supported.")},
        required=["label", "content"],
    ),
    run=_core_memory_append,
)
CORE_MEMORY_REPLACE = BuiltinTool(
    name="core_memory_replace",
    tool_type="letta_memory_core",
    description="Replace the contents of core memory. To delete memories, use an empty string for new_content.",
    parameters=parameters(
        {
            "label": _label(),
            "old_content": prop(S, "String to replace. Must be an exact match."),
            "new_content": prop(S, "Content to write to the memory. All unicode is supported."),
        },
        required=["label", "old_content", "new_content"],
    ),
    run=_core_memory_replace,
)

MEMORY = BuiltinTool(
    name="memory",
    tool_type="letta_memory_core",
    description=(
        "Memory management tool with sub-commands for your memory blocks, each named by a path "
        "'/memories/<label>'.\n\n"
        'Examples: memory(command="create", path="/memories/coding_preferences", description="The user\'s coding '
        'preferences.", file_text="Adds type hints."); memory(command="str_replace", path="/memories/human", '
        'old_str="theme: dark", new_str="theme: light"); memory(command="insert", path="/memories/notes", '
        'insert_line=5, insert_text="New note"); memory(command="delete", path="/memories/old_notes"); '
        'memory(command="rename", old_path="/memories/temp", new_path="/memories/permanent"); '
        'memory(command="rename", path="/memories/temp", description="Temporary notes.")'
    ),
    parameters=parameters(
        {
            "command": prop(S, "The sub-command to run.", enum=list(MEMORY_COMMANDS)),
            "path": prop(S, "Path of the memory block, '/memories/<label>'."),
            "file_text": prop(S, "Starting text of a new block (create)."),
            "description": prop(S, "Description of the block (create, rename)."),
            "old_str": prop(S, "Text to replace; must occur exactly once (str_replace)."),
            "new_str": prop(S, "Replacement text (str_replace)."),
            "insert_line": prop("integer", "Line after which to insert; 0 for the beginning, -1 the end (insert)."),
            "insert_text": prop(S, "Text to insert (insert)."),
            "old_path": prop(S, "Current path (rename)."),
            "new_path": prop(S, "New path (rename)."),
        },
        required=["command"],
    ),
    run=_memory,
)

MEMORY_TOOLS = [
    MEMORY,
    MEMORY_INSERT,
    MEMORY_REPLACE,
    MEMORY_RETHINK,
    MEMORY_FINISH_EDITS,
    CORE_MEMORY_APPEND,
    CORE_MEMORY_REPLACE,
]
