"""letta-client 1.x, each version in a virtualenv of its own, driving a live server.

The project's venv keeps 0.1.324 (the seed 000 port uses it in-process). A 1.x
version is installed once into ``.sdk-venvs/letta-<version>`` (``python -m venv``
+ ``pip install letta-client==<version>``) and reused by later sessions; its
interpreter runs ``tests/sdk/driver.py`` against the server as a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

if TYPE_CHECKING:
    from tests.fake_llm.server import FakeLLMServer
    from tests.support.live_server import LiveServer

VENVS = Path(settings.BASE_DIR) / ".sdk-venvs"
DRIVER = Path(__file__).with_name("driver.py")
INSTALL_TIMEOUT_S = 600
DRIVER_TIMEOUT_S = 300


def sdk_python(version: str) -> Path:
    """The interpreter of a virtualenv holding ``letta-client==version``, created on first use."""
    venv = VENVS / f"letta-{version}"
    python = venv / "bin" / "python"
    marker = venv / ".installed"
    if marker.exists():
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=INSTALL_TIMEOUT_S)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"letta-client=={version}"],
        check=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    marker.write_text(version)
    return python


def run_driver(
    version: str,
    server: LiveServer,
    fake_llm_server: FakeLLMServer,
    scenarios: list[str],
    *,
    model: str | None = None,
) -> dict[str, Any]:
    """Run ``scenarios`` with that SDK version (seed flows on ``model``, when given); the driver's JSON report."""
    options = [f"--model={model}"] if model else []
    arguments = [*options, server.url, server.api_key, fake_llm_server.url, *scenarios]
    result = subprocess.run(
        [str(sdk_python(version)), str(DRIVER), *arguments],
        capture_output=True,
        text=True,
        timeout=DRIVER_TIMEOUT_S,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"The driver failed:\n{result.stdout}\n{result.stderr}")
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["version"] == version
    return report
