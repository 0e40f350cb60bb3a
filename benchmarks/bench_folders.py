"""Processing time and memory of uploaded PDFs: a 1 MB and a 20 MB PDF through the whole pipeline.

Makes the PDFs with reportlab (pages of text), stores each as an upload of a fresh folder on a
throwaway SQLite database, and runs ``folders.processing.process_file`` in this process as a
worker does: the converter (PDFium, in its limited child process), chunking and the offline
``demo`` embedding. Prints, per file: the seconds spent parsing and embedding, the passages, and
the peak resident memory of this process (the worker) and of the converter's process. Asserts
nothing. Run from the project folder:

    .venv/bin/python benchmarks/bench_folders.py [--sizes 1 20]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
WORK = Path(tempfile.mkdtemp(prefix="bench-folders-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
os.environ["DATABASE_URL"] = f"sqlite:///{WORK / 'db.sqlite3'}"
os.environ["FOLDERS_STORAGE_ROOT"] = str(WORK / "files")
os.environ["REDIS_URL"] = ""

import django

django.setup()

from django.conf import settings
from django.core.files.storage import storages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from accounts.models import Organization
from folders.models import FileMetadata, Folder
from folders.processing import process_file
from tests.factories import OrganizationFactory

TEXT = (
    "the pump station keeps water pressure steady across the northern district while operators log "
    "every valve change and inspect seals weekly so that leaks are found before they grow"
)
WORDS = TEXT.split()


def make_pdf(path: Path, megabytes: float) -> int:
    """A PDF of text pages (uncompressed content streams) of about ``megabytes``; its size in bytes."""
    pdf = canvas.Canvas(str(path), pagesize=A4, pageCompression=0)
    target, page, word = megabytes * 1024 * 1024, 0, 0
    while True:
        page += 1
        pdf.setFont("Helvetica", 9)
        for line in range(70):
            text = " ".join(WORDS[(word + n) % len(WORDS)] for n in range(16))
            pdf.drawString(40, 800 - line * 11, f"{page}.{line} {text}")
            word += 16
        pdf.showPage()
        if page % 20 == 0 and _estimate(page) >= target:
            break
    pdf.save()
    return path.stat().st_size


def _estimate(pages: int) -> float:
    return pages * 70 * 120 * 1.1  # bytes of content per page, roughly


def peak_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def run(megabytes: float, organization: Organization) -> None:
    path = WORK / f"bench-{megabytes:g}mb.pdf"
    size = make_pdf(path, megabytes)
    folder = Folder.objects.create(organization=organization, name=f"bench-{megabytes:g}", embedding="demo/bench")
    upload = SimpleUploadedFile(path.name, path.read_bytes(), content_type="application/pdf")
    row = FileMetadata.objects.create(  # as file_upload stores it, left pending: this process runs the pipeline
        organization=organization,
        folder=folder,
        file_name=f"{folder.name}/{path.name}",
        original_file_name=path.name,
        file_type="application/pdf",
        file_size=size,
        storage_key=storages["folders"].save(f"bench/{path.name}", upload),
    )
    moments: dict[str, float] = {}
    started = time.monotonic()

    def observe(file: FileMetadata) -> None:
        moments.setdefault(file.processing_status, time.monotonic() - started)

    process_file(row.pk, progress=observe)
    done = FileMetadata.objects.get(pk=row.pk)
    total = time.monotonic() - started
    parsing = moments.get("embedding", total) - moments.get("parsing", 0.0)
    print(
        f"{size / 1024 / 1024:6.1f} MB PDF: {done.processing_status}, {len(done.content or ''):,} chars, "
        f"{done.total_chunks or 0:,} passages; parse {parsing:.1f} s, chunk+embed {total - parsing:.1f} s, "
        f"total {total:.1f} s; peak RSS worker {peak_mb(resource.RUSAGE_SELF):.0f} MB, "
        f"converter {peak_mb(resource.RUSAGE_CHILDREN):.0f} MB"
        + (f"; error: {done.error_message}" if done.error_message else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 20], help="PDF sizes in MB")
    arguments = parser.parse_args()
    settings.FOLDERS_MAX_FILE_BYTES = 200 * 1024 * 1024
    call_command("migrate", verbosity=0)
    organization = OrganizationFactory(name="Bench", slug="bench")
    for megabytes in arguments.sizes:
        run(megabytes, organization)


if __name__ == "__main__":
    main()
