"""The document converter, run as its own process: ``python -m folders.convert <path>`` prints the Markdown.

``folders.parsing`` starts it with CPU, memory and wall-clock limits, so a converter that
crashes, loops or balloons on a hostile file ends this process only. Exit status 2: the
converter refused the file (its message on stderr).
"""

from __future__ import annotations

import sys

from markitdown import MarkItDown


def main(argv: list[str]) -> int:
    try:
        result = MarkItDown(enable_plugins=False).convert_local(argv[1])
    except Exception as exc:  # the converter's own failure is the answer, whatever its kind
        sys.stderr.write(f"{type(exc).__name__}: {exc}"[:2000])
        return 2
    sys.stdout.write(result.text_content or "")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
