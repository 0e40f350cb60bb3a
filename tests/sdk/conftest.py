"""letta-client 1.x, each version in a virtualenv of its own, driving a live server.

The project's venv keeps 0.1.324 (the seed 000 port uses it in-process). Each 1.x
version of ``versions.txt`` lives in ``.sdk-venvs/letta-<version>``, made once by
``make sdk-envs`` (``.ci/run`` calls it before the suite); nothing is installed
during a test session, and without those virtualenvs the SDK tests are skipped.
Each version's interpreter runs ``tests/sdk/driver.py`` against the server as a
subprocess.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.conf import settings

from tests.support.scripts import json_report
from tests.support.stand_in import stand_in_for

if TYPE_CHECKING:
    from tests.fake_llm.server import FakeLLMServer
    from tests.support.live_server import LiveServer

VENVS = Path(settings.BASE_DIR) / ".sdk-venvs"
VERSIONS = Path(__file__).with_name("versions.txt").read_text().split()
DRIVER = Path(__file__).with_name("driver.py")
DRIVER_TIMEOUT_S = 600  # every scenario of one version in one process, on a loaded machine too
# ``make ts-sdk``: the TypeScript SDK in .sdk-node/ (its marker written last), driven by driver_ts.mjs.
TS_SDK_VERSION = "1.12.1"
TS_SDK = Path(settings.BASE_DIR) / ".sdk-node"
TS_DRIVER = Path(__file__).with_name("driver_ts.mjs")
TS_TESTS = "test_letta_client_ts.py"


def sdk_python(version: str) -> Path:
    """The interpreter of ``make sdk-envs``'s virtualenv holding ``letta-client==version``."""
    return VENVS / f"letta-{version}" / "bin" / "python"


def missing_versions() -> list[str]:
    """The versions whose virtualenv ``make sdk-envs`` has not finished (it writes ``.installed`` last)."""
    return [version for version in VERSIONS if not (VENVS / f"letta-{version}" / ".installed").exists()]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without the virtualenvs, this folder's tests are replaced by one skipped stand-in: one line, no server."""
    here = Path(__file__).parent
    sdk_tests = [item for item in items if item.path.is_relative_to(here)]
    ts_tests = [item for item in sdk_tests if item.path.name == TS_TESTS]
    if ts_tests and not (TS_SDK / f".installed-{TS_SDK_VERSION}").exists():
        stand_in_for(
            config,
            items,
            ts_tests,
            name="ts_sdk_is_installed",
            check="the TypeScript SDK is installed",
            message=(
                f"@letta-ai/letta-client {TS_SDK_VERSION} not in .sdk-node/ ({len(ts_tests)} tests): run make ts-sdk"
            ),
            skip=True,
        )
        sdk_tests = [item for item in sdk_tests if item not in ts_tests]
    missing = missing_versions()
    if not sdk_tests or not missing:
        return
    stand_in_for(
        config,
        items,
        sdk_tests,
        name="sdk_envs_are_prepared",
        check="the letta-client 1.x virtualenvs are prepared",
        message=f"letta-client {', '.join(missing)} not in .sdk-venvs/ ({len(sdk_tests)} SDK tests): run make sdk-envs",
        skip=True,
    )


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
    argv = [str(sdk_python(version)), str(DRIVER), *arguments]
    report = json_report(argv, timeout=DRIVER_TIMEOUT_S, failure="The driver failed")
    assert report["version"] == version
    return report


def run_ts_driver(server: LiveServer, fake_llm_server: FakeLLMServer, scenarios: list[str]) -> dict[str, Any]:
    """Run ``scenarios`` with the TypeScript SDK (``node driver_ts.mjs``); the driver's JSON report."""
    argv = ["node", str(TS_DRIVER), server.url, server.api_key, fake_llm_server.url, *scenarios]
    return json_report(argv, timeout=DRIVER_TIMEOUT_S, failure="The TypeScript driver failed")
