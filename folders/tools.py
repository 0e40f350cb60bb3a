"""The file built-ins, with Letta's names, arguments and answers (LETTA_PLATFORM §3.4):
``open_files``, ``grep_files`` (RE2: the pattern comes from a model) and ``semantic_search_files``.

They reach only the files attached to the calling agent of the calling organization.
``tools.builtins`` offers them through ``settings.TOOL_BUILTIN_SETS``.
"""

from __future__ import annotations

import fnmatch
import time
from typing import Any

import re2
from asgiref.sync import sync_to_async

from agents.memory.archival import cosine, embedder_for, words
from agents.models import Agent
from folders.attachments import close_beyond_limit, file_limits, file_open, lines_of, touch
from folders.models import FileAgent, FileChunk
from tools.base import ToolContext, ToolError
from tools.builtins.base import BuiltinTool, parameters, prop

GREP_PAGE = 20
GREP_MAX_MATCHES = 1000
GREP_SECONDS = 30.0
MAX_PATTERN = 1000
SEARCH_LIMIT = 50
_RULE = "=" * 80
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.case_sensitive = False


def _agent(context: ToolContext) -> Agent:
    agent = Agent.objects.for_org(context.organization_id).filter(pk=context.agent_id).first()
    if agent is None:
        raise ToolError("The calling agent was not found.")
    return agent


def _attached(agent: Agent) -> list[FileAgent]:
    return list(
        FileAgent.objects.for_org(agent.organization_id)
        .filter(agent=agent)
        .select_related("file")
        .order_by("file_name")
    )


# --- open_files ------------------------------------------------------------------------------


def _range_text(start: int | None, end: int | None) -> str:
    if start is None:
        return ""
    return f" (lines {start + 1}-{end})" if end is not None else f" (lines {start + 1}-end)"


def _previous(row: FileAgent) -> str:
    if not row.is_open:
        return ""
    if row.start_line is None:
        return " (previously full file)"
    end = "end" if row.end_line is None else str(row.end_line)
    return f" (previously lines {row.start_line + 1}-{end})"


def _open(arguments: dict[str, Any], context: ToolContext) -> str:
    requests = arguments.get("file_requests") or []
    if not requests:
        raise ToolError("No file requests provided")
    agent = _agent(context)
    limit = file_limits(agent).max_files_open
    if len(requests) > limit:
        raise ToolError(f"Cannot open {len(requests)} files: exceeds configured maximum limit of {limit} files")
    attached = {row.file_name: row for row in _attached(agent)}
    plans = []
    for request in requests:
        name = str(request.get("file_name", ""))
        row = attached.get(name)
        if row is None:
            raise ToolError(
                f"{name} not attached - did you get the filename correct? Currently you have the following "
                f"files attached: {sorted(attached)}"
            )
        offset, length = request.get("offset"), request.get("length")
        if offset is not None and int(offset) < 0:
            raise ToolError(f"Offset for file {name} must be >= 0 (0-indexed), got {offset}")
        if length is not None and int(length) < 1:
            raise ToolError(f"Length for file {name} must be >= 1, got {length}")
        total = len(lines_of(row.file))
        if offset is not None and int(offset) >= max(total, 1):
            raise ToolError(f"File {name} has only {total} lines, but requested offset {offset} is out of range")
        start = int(offset) if offset is not None else (0 if length is not None else None)
        end = start + int(length) if start is not None and length is not None else None
        plans.append((row, start, end))
    closed_others: list[str] = []
    if arguments.get("close_all_others"):
        keep = {row.file_id for row, _, _ in plans}
        others = [row for row in attached.values() if row.is_open and row.file_id not in keep]
        FileAgent.objects.filter(pk__in=[row.pk for row in others]).update(is_open=False, visible_content="")
        closed_others = [row.file_name for row in others]
    labels = []
    for row, start, end in plans:
        labels.append(f"{row.file_name}{_range_text(start, end)}{_previous(row)}")
        file_open(agent=agent, file=row.file, start=start, end=end)
    evicted = close_beyond_limit(agent, keep={row.file_id for row, _, _ in plans})
    text = f"* Opened {labels[0]}" if len(labels) == 1 else f"* Opened {len(labels)} files: {', '.join(labels)}"
    if closed_others:
        text += f"\nNote: Closed {len(closed_others)} file(s) due to close_all_others=True: {', '.join(closed_others)}"
    if evicted:
        text += (
            f"\nNote: Closed {len(evicted)} least recently used file(s) due to open file limit: {', '.join(evicted)}"
        )
    return text


async def _open_files(arguments: dict[str, Any], context: ToolContext) -> str:
    return await sync_to_async(_open)(arguments, context)


# --- grep_files ------------------------------------------------------------------------------


def _name_filter(include: str) -> Any:
    if "*" in include and not any(char in include for char in "^$+()[]{}|\\"):
        return lambda name: fnmatch.fnmatch(name, include) or fnmatch.fnmatch(name.rpartition("/")[2], include)
    try:
        compiled = re2.compile(include, _OPTIONS)
    except re2.error:
        raise ToolError(f"Invalid include pattern: {include!r}") from None
    return lambda name: compiled.search(name) is not None


def _grep(arguments: dict[str, Any], context: ToolContext) -> str:
    pattern = str(arguments.get("pattern") or "")
    if not pattern.strip():
        raise ToolError("Empty search pattern provided")
    if len(pattern) > MAX_PATTERN:
        raise ToolError(f"Search pattern is too long ({len(pattern)} characters; at most {MAX_PATTERN})")
    try:
        compiled = re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        raise ToolError(f"Invalid regex pattern {pattern!r}: {exc}") from None
    include = str(arguments.get("include") or "")
    context_lines = max(0, min(int(arguments.get("context_lines") or 1), 20))
    offset = max(0, int(arguments.get("offset") or 0))
    agent = _agent(context)
    rows = [row for row in _attached(agent) if row.file.content]
    if not rows:
        return "No files are currently attached to search"
    if include:
        matches_name = _name_filter(include)
        wanted = [row for row in rows if matches_name(row.file_name)]
        if not wanted:
            return f"No files match the filename pattern '{include}' (filtered {len(rows)} files)"
        rows = wanted
    deadline = time.monotonic() + GREP_SECONDS
    hits: list[tuple[str, int, list[str]]] = []
    per_file: dict[str, int] = {}
    hit_files = set()
    for row in rows:
        lines = lines_of(row.file)
        for index, line in enumerate(lines):
            if len(hits) >= GREP_MAX_MATCHES or time.monotonic() > deadline:
                break
            if compiled.search(line) is None:
                continue
            low, high = max(0, index - context_lines), min(len(lines), index + context_lines + 1)
            shown = [f"{'>' if n == index else ' '} {n + 1}: {lines[n]}" for n in range(low, high)]
            hits.append((row.file_name, index + 1, shown))
            per_file[row.file_name] = per_file.get(row.file_name, 0) + 1
            hit_files.add(row.file_id)
    if not hits:
        suffix = f" in files matching '{include}'" if include else ""
        return f"No matches found for pattern: '{pattern}'{suffix}"
    touch(agent.pk, hit_files)
    page = hits[offset : offset + GREP_PAGE]
    last = offset + len(page)
    out = [
        f"Found {len(hits)} total matches across {len(per_file)} files (showing matches {offset + 1}-{last} of "
        f"{len(hits)})",
        _RULE,
        "",
        "Files with matches:",
        *(f"  - {name}: {count} matches" for name, count in per_file.items()),
    ]
    for name, number, shown in page:
        out += ["", f"=== {name}:{number} ===", *(f"  {line}" for line in shown)]
    out.append("")
    if last < len(hits):
        out.append(f'To see more matches, call: grep_files(pattern="{pattern}", offset={last})')
    else:
        out.append("No more matches to show.")
    return "\n".join(out)


async def _grep_files(arguments: dict[str, Any], context: ToolContext) -> str:
    return await sync_to_async(_grep)(arguments, context)


# --- semantic_search_files -------------------------------------------------------------------


def _search(arguments: dict[str, Any], context: ToolContext) -> str:
    query = str(arguments.get("query") or "")
    limit = max(1, min(int(arguments.get("limit") or 5), SEARCH_LIMIT))
    agent = _agent(context)
    names = dict(
        FileAgent.objects.for_org(agent.organization_id).filter(agent=agent).values_list("file_id", "file_name")
    )
    chunks = FileChunk.objects.for_org(agent.organization_id).filter(file_id__in=list(names))
    found = _ranked(chunks, query, agent, limit)
    if not found:
        return f"No semantic matches found for query: '{query}'"
    touch(agent.pk, {chunk.file_id for chunk in found})
    files = {chunk.file_id for chunk in found}
    header = (
        f"Found {len(found)} semantic matches in {len(files)} {'file' if len(files) == 1 else 'files'} "
        f"for query: '{query}'"
    )
    out = [header, "=" * len(header)]
    counters: dict[Any, int] = {}
    for chunk in found:
        counters[chunk.file_id] = counters.get(chunk.file_id, 0) + 1
        lines = chunk.text.splitlines() or [chunk.text]
        body = "\n".join(f"  {line}" for line in lines[:20])
        if len(lines) > 20:
            body += f"\n  ... [truncated {len(lines) - 20} more lines]"
        out.append(f"\n=== {names[chunk.file_id]} (passage #{counters[chunk.file_id]}) ===\n{body}")
    return "\n".join(out)


def _ranked(chunks: Any, query: str, agent: Agent, limit: int) -> list[FileChunk]:
    """Chunks by cosine to the query under each file's folder embedding, with word overlap to break ties
    and to rank chunks without a vector (a provider that did not embed)."""
    query_words = set(words(query))
    rows = list(chunks.select_related("file__folder").only("id", "file_id", "text", "embedding", "file__folder"))
    embedders: dict[str, Any] = {}
    scored = []
    for chunk in rows:
        handle = chunk.file.folder.embedding
        if handle not in embedders:
            embed = embedder_for(handle, agent.organization)
            embedders[handle] = embed(query) if embed is not None else None
        wanted = embedders[handle]
        similarity = cosine(wanted, chunk.embedding) if wanted and chunk.embedding else 0.0
        overlap = len(query_words & set(words(chunk.text))) / len(query_words) if query_words else 0.0
        score = similarity + 0.5 * overlap
        if score > 0:
            scored.append((score, chunk))
    scored.sort(key=lambda item: -item[0])
    return [chunk for _score, chunk in scored[:limit]]


async def _semantic_search_files(arguments: dict[str, Any], context: ToolContext) -> str:
    return await sync_to_async(_search)(arguments, context)


_FILE_REQUEST = {
    "type": "object",
    "properties": {
        "file_name": prop("string", "Name of the file to open."),
        "offset": prop(
            "integer",
            "Optional offset for starting line number (0-indexed). If not specified, starts from beginning of file.",
        ),
        "length": prop(
            "integer",
            "Optional number of lines to view from offset (inclusive). If not specified, views to end of file.",
        ),
    },
    "required": ["file_name"],
}

FILE_TOOLS = [
    BuiltinTool(
        name="open_files",
        tool_type="letta_files_core",
        description=(
            "Open one or more files and load their contents into files section in core memory. Maximum of 5 files "
            "can be opened simultaneously. Use this when you want to: inspect or reference file contents; load "
            "specific lines of a file; close all other files while opening new ones."
        ),
        parameters=parameters(
            {
                "file_requests": {
                    "type": "array",
                    "items": _FILE_REQUEST,
                    "description": "List of file open requests, each specifying file name and optional view range.",
                },
                "close_all_others": prop(
                    "boolean", "If True, closes all other currently open files first. Defaults to False."
                ),
            },
            ["file_requests"],
        ),
        run=_open_files,
    ),
    BuiltinTool(
        name="grep_files",
        tool_type="letta_files_core",
        description=(
            "Searches file contents for pattern matches with surrounding context. Results are paginated - shows 20 "
            "matches per call. The response includes: a summary of total matches and which files contain them, the "
            "current page of matches (20 at a time), and instructions for viewing more matches using the offset "
            "parameter."
        ),
        parameters=parameters(
            {
                "pattern": prop("string", "Keyword or regex pattern to search within file contents."),
                "include": prop("string", "Optional keyword or regex pattern to filter filenames to include."),
                "context_lines": prop("integer", "Number of lines of context to show before and after each match."),
                "offset": prop("integer", "Number of matches to skip before showing results, for pagination."),
            },
            ["pattern"],
        ),
        run=_grep_files,
        enable_parallel_execution=True,
    ),
    BuiltinTool(
        name="semantic_search_files",
        tool_type="letta_files_core",
        description=(
            "Searches file contents using semantic meaning rather than exact matches. Ideal for: finding conceptually "
            "related information across files; discovering relevant content without knowing exact keywords; "
            "locating files with similar topics or themes."
        ),
        parameters=parameters(
            {
                "query": prop("string", "The search query text to find semantically similar content."),
                "limit": prop("integer", "Maximum number of results to return (default: 5)"),
            },
            ["query"],
        ),
        run=_semantic_search_files,
        enable_parallel_execution=True,
    ),
]
