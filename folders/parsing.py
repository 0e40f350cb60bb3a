"""A file's bytes to text: decoded when it is text, converted by ``folders.convert`` in a limited process otherwise.

The converter (PDFium for PDFs, markitdown for office files) parses untrusted files, so it runs in a child
process with ``FOLDERS_PARSE_SECONDS`` of wall clock and CPU and ``FOLDERS_PARSE_MEMORY_BYTES``
of address space; past either it is killed and the file ends in ``error`` with the reason.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from django.conf import settings

from folders.errors import ParseFailed
from folders.filetypes import needs_converter

BASE_DIR = Path(__file__).resolve().parent.parent


def parse(data: bytes, *, file_type: str, file_name: str) -> str:
    """The text of ``data``; ``ParseFailed`` with a reason a person can act on."""
    text = convert(data, file_name=file_name) if needs_converter(file_type) else decode(data)
    if not text.strip():
        raise ParseFailed("No text extracted from PDF" if file_type == "application/pdf" else "No text in the file")
    return text


def decode(data: bytes) -> str:
    """UTF-8 (a BOM dropped), else Latin-1: a text file always decodes; NULs are removed (Postgres refuses them)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return text.replace("\x00", "")


def _limits() -> None:
    seconds = int(settings.FOLDERS_PARSE_SECONDS)
    memory = int(settings.FOLDERS_PARSE_MEMORY_BYTES)
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def convert(data: bytes, *, file_name: str) -> str:
    """Run the converter on ``data`` in its own process (see the module's docstring)."""
    suffix = Path(file_name).suffix.lower()
    with tempfile.TemporaryDirectory(prefix="folders-") as directory:
        path = Path(directory) / f"upload{suffix}"
        path.write_bytes(data)
        environment = {**os.environ, "PYTHONPATH": str(BASE_DIR)}
        try:
            done = subprocess.run(
                [sys.executable, "-m", "folders.convert", str(path)],
                capture_output=True,
                timeout=float(settings.FOLDERS_PARSE_SECONDS),
                preexec_fn=_limits,
                env=environment,
                cwd=directory,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ParseFailed(
                f"Parsing {file_name} took longer than {settings.FOLDERS_PARSE_SECONDS:g} seconds"
            ) from None
    if done.returncode == 0:
        return decode(done.stdout)
    if done.returncode == 2:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = reason[-1].strip().removeprefix("- ") if reason else "the converter refused it"
        raise ParseFailed(f"Could not parse {file_name}: {detail}")
    raise ParseFailed(f"Parsing {file_name} was stopped (it ran out of time or memory, exit status {done.returncode})")
