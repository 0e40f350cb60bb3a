"""Issue 14 item 6: limits hold per sandboxed call, not per process, and calls at once are capped.

With a delegated cgroup v2 parent (``TOOL_SANDBOX_CGROUP_PARENT``) each call gets a cgroup of
its own; without one, the per-process limits are lowered so that every process of a call at
its limit together stays within the call's budget. Concurrent calls are capped per server
and per organization with a "busy" error result.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest

from tests.tools.helpers import model_view, source_spec
from tools.base import ToolContext
from tools.runtime import DefaultToolRunner
from tools.sandbox.base import MiB, SandboxLimits
from tools.sandbox.cgroups import CONTROLLERS
from tools.sandbox.selection import get_sandbox_backend
from tools.sandbox.slots import call_slots

ORG_A, ORG_B = uuid.uuid4(), uuid.uuid4()
BUDGET = SandboxLimits(wall_seconds=10.0, cpu_seconds=8, memory_bytes=512 * MiB, max_processes=32)
OWN_LIMITS = """
def own_limits() -> dict:
    import resource
    return {
        "processes": resource.getrlimit(resource.RLIMIT_NPROC)[0],
        "memory": resource.getrlimit(resource.RLIMIT_AS)[0],
        "cpu": resource.getrlimit(resource.RLIMIT_CPU)[0],
    }
"""
HELLO = "def hello() -> str:\n    return 'hello'\n"


@pytest.fixture
def runner() -> DefaultToolRunner:
    backend = get_sandbox_backend()
    assert backend.name == "bubblewrap", getattr(backend, "reason", backend.name)
    return DefaultToolRunner(sandbox=backend, limits=BUDGET)


def context(organization_id: uuid.UUID | None) -> ToolContext:
    return ToolContext(organization_id=organization_id, agent_id=None)


async def test_without_cgroups_the_product_of_per_process_limits_is_the_calls_budget(runner, settings, tmp_path):
    settings.TOOL_SANDBOX_CGROUP_PARENT = str(tmp_path)  # not a cgroup: the fallback, logged

    outcome = await runner.run(source_spec(OWN_LIMITS), "{}", context(ORG_A))

    seen = json.loads(outcome.tool_return)
    assert 1 <= seen["processes"] < BUDGET.max_processes
    assert seen["processes"] * seen["memory"] <= BUDGET.memory_bytes
    assert seen["processes"] * seen["cpu"] <= BUDGET.cpu_seconds


async def test_a_call_beyond_the_organizations_cap_is_a_busy_error_and_others_still_run(runner, settings):
    settings.TOOL_SANDBOX_MAX_CALLS_PER_ORGANIZATION = 1
    with call_slots(ORG_A):  # one call of organization A is running (in any process of this host)
        busy = await runner.run(source_spec(HELLO), "{}", context(ORG_A))
        other = await runner.run(source_spec(HELLO), "{}", context(ORG_B))

    assert busy.status == "error"
    assert model_view(busy)["message"] == (
        "The sandbox is busy: your organization already has 1 tool calls running. "
        "Try again when one of them has finished."
    )
    assert other.tool_return == "hello"
    assert (await runner.run(source_spec(HELLO), "{}", context(ORG_A))).tool_return == "hello"  # freed


async def test_a_call_beyond_the_servers_cap_is_a_busy_error_for_every_organization(runner, settings):
    settings.TOOL_SANDBOX_MAX_CALLS = 2
    with call_slots(ORG_A), call_slots(ORG_B):
        outcomes = [await runner.run(source_spec(HELLO), "{}", context(org)) for org in (ORG_A, uuid.uuid4())]

    assert {outcome.tool_return for outcome in outcomes} == {
        "The sandbox is busy: this server is running its limit of 2 tool calls. Try again in a moment."
    }


async def test_run_code_answers_busy_too(settings):
    from tools.builtins import default_registry

    settings.TOOL_SANDBOX_MAX_CALLS_PER_ORGANIZATION = 1
    runner = DefaultToolRunner(registry=default_registry(sandbox=get_sandbox_backend()))
    spec = next(spec for spec in _builtin_specs() if spec.name == "run_code")
    with call_slots(ORG_A):
        outcome = await runner.run(spec, json.dumps({"code": "1 + 1", "language": "python"}), context(ORG_A))

    assert outcome.status == "error"
    assert "The sandbox is busy" in outcome.tool_return


def _builtin_specs():
    from tools.base import ToolSpec
    from tools.builtins import default_registry

    return [
        ToolSpec(name=builtin.name, kind="builtin", json_schema=builtin.json_schema) for builtin in default_registry()
    ]


def usable_cgroup_parent() -> str | None:
    """A delegated cgroup v2 directory for these tests (``TOOL_SANDBOX_TEST_CGROUP_PARENT``), if the host has one."""
    path = os.environ.get("TOOL_SANDBOX_TEST_CGROUP_PARENT", "")
    if not path:
        return None
    controllers = (Path(path) / "cgroup.controllers").read_text().split()
    return path if all(name in controllers for name in CONTROLLERS) else None


@pytest.mark.skipif(
    usable_cgroup_parent() is None,
    reason="needs a delegated cgroup v2 parent with cpu, memory and pids (TOOL_SANDBOX_TEST_CGROUP_PARENT); "
    "this host's cgroup v2 hierarchy has no controllers",
)
async def test_in_a_cgroup_the_memory_of_all_a_calls_processes_together_is_capped(runner, settings):
    settings.TOOL_SANDBOX_CGROUP_PARENT = usable_cgroup_parent()
    source = """
def hog() -> str:
    import os, time
    children = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            block = bytearray(200 * 1024 * 1024)
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(30)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    return "all three held 200 MiB"
"""
    before = set(os.listdir(settings.TOOL_SANDBOX_CGROUP_PARENT))
    outcome = await runner.run(source_spec(source), "{}", context(ORG_A))

    assert outcome.status == "error"  # 600 MiB together, above the call's 512 MiB
    assert set(os.listdir(settings.TOOL_SANDBOX_CGROUP_PARENT)) == before  # the call's cgroup is gone
