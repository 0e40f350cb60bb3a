"""Agent files through the official SDKs against a live server: letta-client 0.1.324 (this venv)
and 1.12.x (``.sdk-venvs``, through ``driver_1x.py``), every example file of ``fixtures/``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from letta_client import Letta
from letta_client.core.api_error import ApiError

from tests.agentfiles.test_export_api import without_volatile
from tests.agentfiles.test_import_api import FILES, FIXTURES
from tests.sdk.conftest import VERSIONS, sdk_python

if TYPE_CHECKING:
    from tests.support.live_server import LiveServer

pytestmark = [pytest.mark.live_server, pytest.mark.sdk]

DRIVER = Path(__file__).with_name("driver_1x.py")


@pytest.mark.parametrize("name", FILES)
def test_letta_client_0_1_imports_every_example_file(sdk_client: Letta, name: str) -> None:
    with (FIXTURES / name).open("rb") as handle:
        answer = sdk_client.agents.import_file(file=handle)  # 0.1.324 has no model override

    source = json.loads((FIXTURES / name).read_bytes())
    source = json.loads(source) if isinstance(source, str) else source
    entry = (source.get("agents") or [source])[0]
    agent = sdk_client.agents.retrieve(agent_id=answer.agent_ids[0])
    assert agent.name == f"{entry['name']}_copy"
    blocks = source.get("blocks") or source.get("core_memory") or []
    wanted = {b["label"] for b in blocks if "block_ids" not in entry or b["id"] in entry["block_ids"]}
    assert {block.label for block in agent.memory.blocks} == wanted


def test_letta_client_0_1_exports_and_reimports(sdk_client: Letta) -> None:
    with (FIXTURES / "v2-297e8217e952_loop.af").open("rb") as handle:
        agent_id = sdk_client.agents.import_file(file=handle, append_copy_suffix=False).agent_ids[0]

    exported = sdk_client.agents.export_file(agent_id=agent_id)
    document = exported if isinstance(exported, dict) else json.loads(exported)
    again = sdk_client.agents.import_file(file=("loop.af", json.dumps(document).encode()), append_copy_suffix=False)
    second = sdk_client.agents.export_file(agent_id=again.agent_ids[0])

    assert document["agents"][0]["name"] == "Loop"
    assert without_volatile(second if isinstance(second, dict) else json.loads(second)) == without_volatile(document)
    with pytest.raises(ApiError) as bad:
        sdk_client.agents.import_file(file=("bad.af", b"{not json"))
    assert bad.value.status_code == 400


def _run_1x(python: Path, version: str, server: LiveServer) -> dict[str, Any]:
    if not python.exists():
        pytest.skip(f"letta-client {version} is not in .sdk-venvs/ (make sdk-envs)")
    result = subprocess.run(
        [str(python), str(DRIVER), server.url, server.api_key, str(FIXTURES)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["version"] == version
    return report


@pytest.mark.parametrize("version", VERSIONS)
def test_letta_client_1x_imports_exports_and_round_trips(letta_server: LiveServer, version: str) -> None:
    report = _run_1x(sdk_python(version), version, letta_server)

    assert set(report["imports"]) == set(FILES)
    evie = report["imports"]["v2-3e54e2fa2f7e_evie.af"]
    assert len(evie["agent_ids"]) == 2
    loop = report["imports"]["v2-297e8217e952_loop.af"]
    assert loop["name"] == "Loop_copy"
    assert "note" in loop["tools"]
    assert len(loop["blocks"]) == 9
    workflow = report["imports"]["v2-b1c2d3e4f5a6_outreach_workflow_agent.double-encoded.af"]
    assert {"run_first:retrieve_candidate", "exit_loop:send_email"} <= set(workflow["rules"])
    round_trip = report["round_trip"]
    assert round_trip["exported_type"] == "str"
    assert without_volatile(round_trip["second"]) == without_volatile(round_trip["first"])
    assert report["bad"]["status"] == 400
    assert "assistant_message" in report["answer"]
    assert "<soul>" in report["recompiled"]  # the file's blocks compile into the system prompt
