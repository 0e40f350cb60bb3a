"""The document converter, run as its own process: ``python -m folders.convert <path>`` prints the text.

PDFs go through PDFium (``pypdfium2``): markitdown's PDF path (pdfminer) took over 300 seconds for
a 1 MB PDF of text where PDFium takes well under one (``benchmarks/bench_folders.py``). Workbooks
(XLSX) go through openpyxl, each sheet a Markdown table of its cell values (markitdown's own XLSX
path needs pandas). DOCX, PPTX and HTML go through markitdown, to Markdown. ``folders.parsing``
starts this with CPU, memory and wall-clock limits, so a converter that crashes, loops or balloons
on a hostile file ends this process only. Exit status 2: the converter refused the file (its message on stderr).
"""

from __future__ import annotations

import sys

import openpyxl
import pypdfium2

WORKBOOK_EXTENSIONS = (".xlsx", ".xlsm")


def pdf_text(path: str) -> str:
    """Each page's text, pages separated by a blank line."""
    document = pypdfium2.PdfDocument(path)
    pages: list[str] = []
    try:
        for page in document:
            text = page.get_textpage()
            pages.append(text.get_text_bounded().replace("\r\n", "\n"))
            text.close()
            page.close()
    finally:
        document.close()
    return "\n\n".join(pages)


def _cell(value: object) -> str:
    return "" if value is None else str(value).replace("|", "\\|").replace("\n", " ")


def workbook_text(path: str) -> str:
    """Each sheet as ``## name`` and a Markdown table of its values (formulas as last computed), in order."""
    workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    sections: list[str] = []
    try:
        for sheet in workbook.worksheets:
            rows = [[_cell(value) for value in row] for row in sheet.iter_rows(values_only=True)]
            rows = [row for row in rows if any(row)]
            if not rows:
                continue
            width = max(len(row) for row in rows)
            rows = [row + [""] * (width - len(row)) for row in rows]
            lines = [f"## {sheet.title}", "", "| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
            lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
            sections.append("\n".join(lines))
    finally:
        workbook.close()
    return "\n\n".join(sections)


def document_text(path: str) -> str:
    """DOCX, PPTX or HTML as Markdown."""
    from markitdown import MarkItDown

    return MarkItDown(enable_plugins=False).convert_local(path).text_content or ""


def main(argv: list[str]) -> int:
    path = argv[1]
    try:
        lowered = path.lower()
        if lowered.endswith(".pdf"):
            text = pdf_text(path)
        elif lowered.endswith(WORKBOOK_EXTENSIONS):
            text = workbook_text(path)
        else:
            text = document_text(path)
    except Exception as exc:  # the converter's own failure is the answer, whatever its kind
        sys.stderr.write(f"{type(exc).__name__}: {exc}"[:2000])
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
