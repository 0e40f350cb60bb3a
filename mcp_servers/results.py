"""An MCP call's result as the text a model reads, with its images, and everything else said, not dropped.

Text parts are joined with a space, as Letta does. Structured content is passed on as JSON when
the server gave no text for it; an embedded resource gives its text (or says what it is); an
audio part is described by its type and size. An image part is described the same way in the
text and, when it is a PNG, JPEG, GIF or WebP image within ``MCP_MAX_IMAGE_BYTES`` and among the
first ``MCP_MAX_IMAGES`` of the result, kept as an image for models that take images; one left out
says why in the text. The text is cut at ``MCP_MAX_RESULT_CHARS`` with a notice saying how much was cut.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
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

from tools.base import ToolImage

EMPTY_RESULT = "Empty response from tool"

#: The image types every provider that takes images accepts (Anthropic's list), by their first bytes.
IMAGE_SIGNATURES = (
    ("image/png", b"\x89PNG\r\n\x1a\n"),
    ("image/jpeg", b"\xff\xd8\xff"),
    ("image/gif", b"GIF87a"),
    ("image/gif", b"GIF89a"),
)
SUPPORTED_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


@dataclass(frozen=True)
class ResultContent:
    """A result as the model gets it: ``ok`` unless the server flagged an error, the text, the images kept."""

    ok: bool
    text: str
    images: tuple[ToolImage, ...] = ()


def result_content(result: CallToolResult) -> ResultContent:
    """The text of ``result`` and the images kept from it (see the module's docstring for which)."""
    images: list[ToolImage] = []
    parts: list[str] = []
    for part in result.content:
        if isinstance(part, ImageContent):
            description, image = _image(part, kept=len(images))
            parts.append(description)
            if image is not None:
                images.append(image)
        else:
            parts.append(_part_text(part))
    text = " ".join(part for part in parts if part)
    structured = result.structured_content
    if structured is not None and not any(isinstance(part, TextContent) for part in result.content):
        text = f"{text} {json.dumps(structured, ensure_ascii=False, default=str)}".strip()
    return ResultContent(ok=not result.is_error, text=_limited(text or EMPTY_RESULT), images=tuple(images))


def result_text(result: CallToolResult) -> tuple[bool, str]:
    """``(ok, text)``: ``ok`` unless the server flagged the result as an error; images are only described."""
    content = result_content(result)
    return content.ok, content.text


def _image(part: ImageContent, *, kept: int) -> tuple[str, ToolImage | None]:
    """The text describing an image part, and the image when it can reach a model (else the text says why not)."""
    raw = _decoded(part.data)
    size = len(raw) if raw is not None else len(part.data)
    described = f"image {part.mime_type}, {size} bytes"
    if raw is None:
        return f"[{described}; not attached: the image data is not valid base64]", None
    mime_type = _sniffed_type(raw)
    if mime_type is None:
        accepted = ", ".join(SUPPORTED_IMAGE_TYPES)
        return f"[{described}; not attached: unsupported image type (accepted: {accepted})]", None
    limit = int(settings.MCP_MAX_IMAGE_BYTES)
    if size > limit:
        return f"[{described}; not attached: image too large ({size} bytes, the limit is {limit} bytes)]", None
    most = int(settings.MCP_MAX_IMAGES)
    if kept >= most:
        return f"[{described}; not attached: more than {most} images in one result]", None
    return f"[{described}]", ToolImage(mime_type=mime_type, data=base64.b64encode(raw).decode("ascii"))


def _decoded(data: str) -> bytes | None:
    try:
        return base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def _sniffed_type(raw: bytes) -> str | None:
    """The image's type from its first bytes (a server's ``mimeType`` may be wrong; providers check)."""
    for mime_type, signature in IMAGE_SIGNATURES:
        if raw.startswith(signature):
            return mime_type
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return None


def _part_text(part: Any) -> str:
    if isinstance(part, TextContent):
        return part.text
    if isinstance(part, AudioContent):
        return f"[audio {part.mime_type}, {_decoded_size(part.data)} bytes]"
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
