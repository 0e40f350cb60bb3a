"""The filesystem's errors, each with its HTTP status (``core.errors``)."""

from __future__ import annotations

from core.errors import ApplicationError

SUPPORTED = "PDF, text files (.txt, .md), JSON, and code files (.py, .js, .java, etc.)."


class UnsupportedFileType(ApplicationError):
    status_code = 415

    def __init__(self, mime: str, file_name: str) -> None:
        super().__init__(f"Unsupported file type: {mime} (filename: {file_name}). Supported types: {SUPPORTED}")


class SpreadsheetNotSupported(ApplicationError):
    status_code = 415

    def __init__(self, file_name: str) -> None:
        super().__init__(
            f"XLSX is not supported yet (filename: {file_name}): export the sheet as CSV and upload that. "
            f"Supported types: {SUPPORTED}"
        )


class FileTooLarge(ApplicationError):
    status_code = 413


class ParseFailed(Exception):
    """The converter gave no text; the message is the file's ``error_message``."""
