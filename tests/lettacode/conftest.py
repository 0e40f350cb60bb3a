"""Letta Code 0.32.18 against a live server whose Anthropic is the fake LLM.

``make letta-code`` installs it once into ``.letta-code/`` (``.ci/run`` calls it); without it this
folder's tests are replaced by one skipped line. Each module gets a server of its own (its own
database) whose only model provider is the fake Anthropic, so the model Letta Code picks for its
default agent, the first of ``GET /v1/models/``, is a Claude model and its toolset has ``Bash``.
Each test is a new user: a fresh home and project folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.lettacode.client import BUNDLE, READY, LettaCode, installed
from tests.support.live_server import start_inprocess_server
from tests.support.stand_in import stand_in_for

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.fake_llm.server import FakeLLMServer
    from tests.support.live_server import LiveServer


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without ``make letta-code``, one skipped stand-in instead of this folder's tests: no server starts."""
    here = Path(__file__).parent
    group = [item for item in items if item.path.is_relative_to(here)]
    if not group or installed():
        return
    stand_in_for(
        config,
        items,
        group,
        name="letta_code_is_installed",
        check="Letta Code 0.32.18 is installed",
        message=f"Letta Code is not in {BUNDLE.parent.parent}/ ({len(group)} tests): run make letta-code",
        skip=True,
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, fake_llm_server: FakeLLMServer) -> Iterator[LiveServer]:
    env = fake_llm_server.server_env() | {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    with start_inprocess_server(tmp_path_factory.mktemp("letta-code"), extra_env=env) as live:
        yield live


@pytest.fixture
def letta_code(server: LiveServer, tmp_path: Path) -> LettaCode:
    """A new user: an empty home and an empty project folder."""
    (tmp_path / "home").mkdir()
    (tmp_path / "project").mkdir()
    return LettaCode(server=server, home=tmp_path / "home", project=tmp_path / "project")


@pytest.fixture
def agent_id(letta_code: LettaCode) -> str:
    """The default agent Letta Code makes the first time a user starts it (the TUI, quit at its prompt)."""
    with letta_code.terminal() as screen:
        screen.expect(READY, timeout=90)
    return str(letta_code.settings()["lastAgent"])
