"""Which uploads are accepted, their MIME types, and which need a document converter.

Letta's list (``S/file_processor/file_types.py``) plus DOCX, PPTX and HTML, which the
converter reads. The extension decides; a name without a known extension falls back on the
part's Content-Type. ``.md`` is recorded as ``text/x-markdown`` whatever the client sent.
"""

from __future__ import annotations

import mimetypes
import posixpath

DOCUMENT_TYPES = {
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".html": "text/html",
    ".htm": "text/html",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".xlsm": "application/vnd.ms-excel.sheet.macroEnabled.12",
}
TEXT_TYPES = {
    ".txt": "text/plain",
    ".md": "text/x-markdown",
    ".markdown": "text/markdown",
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".csv": "text/csv",
    ".xml": "application/xml",
    ".yaml": "application/x-yaml",
    ".yml": "application/x-yaml",
    ".toml": "application/toml",
    ".ini": "text/plain",
    ".cfg": "text/plain",
    ".conf": "text/plain",
    ".css": "text/css",
    ".scss": "text/x-scss",
    ".sass": "text/x-sass",
    ".less": "text/x-less",
    ".sh": "text/x-shellscript",
    ".bash": "text/x-shellscript",
    ".ps1": "text/plain",
    ".bat": "text/plain",
    ".cmd": "text/plain",
    ".sql": "application/sql",
    ".dockerfile": "text/plain",
}
CODE_EXTENSIONS = [
    ".py",
    ".js",
    ".ts",
    ".jsx",
    ".tsx",
    ".vue",
    ".java",
    ".c",
    ".h",
    ".cpp",
    ".cxx",
    ".cs",
    ".php",
    ".rb",
    ".go",
    ".rs",
    ".swift",
    ".kt",
    ".scala",
    ".r",
    ".m",
]
TEXT_TYPES.update({extension: "text/plain" for extension in CODE_EXTENSIONS})
CODE_TYPES = frozenset(CODE_EXTENSIONS)
ALLOWED_MIME_TYPES = frozenset(DOCUMENT_TYPES.values()) | frozenset(TEXT_TYPES.values())


def extension_of(file_name: str) -> str:
    base = posixpath.basename(file_name).lower()
    if base == "dockerfile":
        return ".dockerfile"
    return posixpath.splitext(base)[1]


# The old binary workbook is refused with a reason of its own: openpyxl reads only the XML ones
# (.xlsx, .xlsm), and a reader of the 97-2003 format is not worth its weight for one format.
LEGACY_SPREADSHEET_EXTENSIONS = frozenset({".xls"})


def is_legacy_spreadsheet(file_name: str) -> bool:
    return extension_of(file_name) in LEGACY_SPREADSHEET_EXTENSIONS


def file_type_of(file_name: str, content_type: str | None) -> str | None:
    """The MIME type recorded for an upload, or ``None`` when it is not one we accept."""
    extension = extension_of(file_name)
    if extension in DOCUMENT_TYPES:
        return DOCUMENT_TYPES[extension]
    if extension in TEXT_TYPES:
        return TEXT_TYPES[extension]
    given = (content_type or "").split(";")[0].strip().lower()
    if given and given != "application/octet-stream":
        return given if given in ALLOWED_MIME_TYPES or given.startswith("text/") else None
    guessed = mimetypes.guess_type(file_name)[0]
    return guessed if guessed in ALLOWED_MIME_TYPES else None


def needs_converter(file_type: str) -> bool:
    """Whether the bytes must go through the document converter (else they are decoded as text)."""
    return file_type in DOCUMENT_TYPES.values()


def is_code(file_name: str) -> bool:
    """Code keeps its indentation in the numbered view; data and plain text are stripped."""
    return extension_of(file_name) in CODE_TYPES
