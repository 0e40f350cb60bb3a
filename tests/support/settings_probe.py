"""Loading the settings in a fresh interpreter, as a deployment with its own environment would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

PROJECT = Path(__file__).resolve().parents[2]


def run_probe(probe: str, env: Mapping[str, str], *, unset: Collection[str]) -> subprocess.CompletedProcess[str]:
    """``python -c probe`` at the project's root, in this process's environment less ``unset``, plus ``env``."""
    clean = {key: value for key, value in os.environ.items() if key not in unset}
    return subprocess.run(
        [sys.executable, "-c", probe],
        cwd=PROJECT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
