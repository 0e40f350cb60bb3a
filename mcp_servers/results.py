"""An MCP call's result as the text a model reads, with everything beyond text said, not dropped.

Text parts are joined with a space, as Letta does. Structured content is passed on as JSON when
the server gave no text for it; an embedded resource gives its text (or says what it is); an
image or audio part is described by its type and size, since the tool return a model reads is
text. The whole is cut at ``MCP_MAX_RESULT_CHARS`` with a notice saying how much was cut.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from django.conf import settings
from mcp.types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

EMPTY_RESULT = "Empty response from tool"


def result_text(result: CallToolResult) -> tuple[bool, str]:
    """``(ok, text)``: ``ok`` unless the server flagged the result as an error."""
    parts = [_part_text(part) for part in result.content]
    text = " ".join(part for part in parts if part)
    structured = result.structured_content
    if structured is not None and not any(isinstance(part, TextContent) for part in result.content):
        text = f"{text} {json.dumps(structured, ensure_ascii=False, default=str)}".strip()
    return not result.is_error, _limited(text or EMPTY_RESULT)


def _part_text(part: Any) -> str:
    if isinstance(part, TextContent):
        return part.text
    if isinstance(part, ImageContent | AudioContent):
        kind = "image" if isinstance(part, ImageContent) else "audio"
        return f"[{kind} {part.mime_type}, {_decoded_size(part.data)} bytes]"
    if isinstance(part, EmbeddedResource):
        resource = part.resource
        if isinstance(resource, TextResourceContents):
            return resource.text
        return f"[resource {resource.uri} ({resource.mime_type or 'binary'})]"
    if isinstance(part, ResourceLink):
        return f"[resource link {part.uri}]"
    return str(part)


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)


def _limited(text: str) -> str:
    limit = int(settings.MCP_MAX_RESULT_CHARS)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [truncated by the server: {len(text) - limit} more characters]"
