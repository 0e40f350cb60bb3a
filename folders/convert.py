"""The document converter, run as its own process: ``python -m folders.convert <path>`` prints the text.

PDFs go through PDFium (``pypdfium2``): markitdown's PDF path (pdfminer) took over 300 seconds for
a 1 MB PDF of text where PDFium takes well under one (``benchmarks/bench_folders.py``). DOCX, PPTX
and HTML go through markitdown, to Markdown. ``folders.parsing`` starts this with CPU, memory and
wall-clock limits, so a converter that crashes, loops or balloons on a hostile file ends this
process only. Exit status 2: the converter refused the file (its message on stderr).
"""

from __future__ import annotations

import sys

import pypdfium2


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


def document_text(path: str) -> str:
    """DOCX, PPTX or HTML as Markdown."""
    from markitdown import MarkItDown

    return MarkItDown(enable_plugins=False).convert_local(path).text_content or ""


def main(argv: list[str]) -> int:
    path = argv[1]
    try:
        text = pdf_text(path) if path.lower().endswith(".pdf") else document_text(path)
    except Exception as exc:  # the converter's own failure is the answer, whatever its kind
        sys.stderr.write(f"{type(exc).__name__}: {exc}"[:2000])
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
