"""Running a driver script (an SDK's own interpreter, node) that reports in JSON on its last line."""

from __future__ import annotations

import json
import subprocess
from typing import Any


def json_report(argv: list[str], *, timeout: float, failure: str) -> dict[str, Any]:
    """Run ``argv``; the JSON object on the last line it printed. A non-zero exit raises
    ``RuntimeError`` (``failure``, then the script's stdout and stderr)."""
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{failure}:\n{result.stdout}\n{result.stderr}")
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return report
