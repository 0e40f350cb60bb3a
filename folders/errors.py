"""The filesystem's errors, each with its HTTP status (``core.errors``)."""

from __future__ import annotations

from core.errors import ApplicationError

SUPPORTED = "PDF, text files (.txt, .md), JSON, and code files (.py, .js, .java, etc.)."


class UnsupportedFileType(ApplicationError):
    status_code = 415

    def __init__(self, mime: str, file_name: str) -> None:
        super().__init__(f"Unsupported file type: {mime} (filename: {file_name}). Supported types: {SUPPORTED}")


class LegacySpreadsheetNotSupported(ApplicationError):
    status_code = 415

    def __init__(self, file_name: str) -> None:
        super().__init__(
            f"XLS (Excel 97-2003) is not supported (filename: {file_name}): save the workbook as XLSX or CSV "
            f"and upload that. Supported types: {SUPPORTED}"
        )


class FileTooLarge(ApplicationError):
    status_code = 413


class ParseFailed(Exception):
    """The converter gave no text; the message is the file's ``error_message``."""
