"""Text to pieces: the passages a file is embedded and searched by, and the numbered lines an agent reads.

``passages`` splits into about ``size`` words with an overlap of 50 (Letta's default chunk size
300, overlap 50), preferring to cut at a sentence end. ``numbered_lines`` is Letta's line
chunker: empty lines dropped, code keeps its indentation, other text is stripped.
"""

from __future__ import annotations

import re

OVERLAP = 50
_SENTENCE_END = re.compile(r"[.!?:;]$")


def passages(text: str, *, size: int = 300, overlap: int = OVERLAP) -> list[str]:
    words = text.split()
    if not words:
        return []
    size = max(size, 1)
    overlap = min(overlap, size // 2)
    out: list[str] = []
    start = 0
    while start < len(words):
        end = min(start + size, len(words))
        if end < len(words):
            for cut in range(end, max(start + size // 2, start + 1), -1):
                if _SENTENCE_END.search(words[cut - 1]):
                    end = cut
                    break
        out.append(" ".join(words[start:end]))
        if end >= len(words):
            break
        start = max(end - overlap, start + 1)
    return out


def numbered_lines(text: str, *, keep_indent: bool) -> list[str]:
    """The file's lines as the agent reads them (without numbers): empty ones dropped."""
    lines = [line.rstrip() if keep_indent else line.strip() for line in text.splitlines()]
    return [line for line in lines if line.strip()]


def visible_content(lines: list[str], *, start: int | None, end: int | None, limit: int) -> str:
    """Letta's view of lines ``start``..``end`` (0-based, end exclusive) with a header, cut at ``limit`` chars."""
    total = len(lines)
    if start is None or (start == 0 and end is None):
        header, first, shown = f"[Viewing file start (out of {total} lines)]", 0, lines
    elif end is None or end >= total:
        header, first, shown = f"[Viewing lines {start + 1} to end (out of {total} lines)]", start, lines[start:]
    else:
        header, first, shown = f"[Viewing lines {start + 1} to {end} (out of {total} lines)]", start, lines[start:end]
    body = "\n".join([header, *(f"{first + index + 1}: {line}" for index, line in enumerate(shown))])
    if len(body) > limit:
        notice = "...[TRUNCATED]\n# NOTE: This block is truncated, use functions to view the full content."
        body = body[: max(limit - len(notice) - 1, 0)].rstrip() + "\n" + notice
    return body
