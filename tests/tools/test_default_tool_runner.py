"""DefaultToolRunner: dispatch, packaging for the model, return limits, and failures that never raise."""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync

from tests.factories import AgentToolFactory
from tests.tools.helpers import FAST_LIMITS, NO_CONTEXT, model_view, source_spec
from tests.tools.test_schema import ROLL_DICE_SOURCE
from tools.base import ToolContext, ToolError, ToolSpec
from tools.builtins import BuiltinRegistry, BuiltinTool
from tools.builtins.base import parameters, prop
from tools.runtime import DefaultToolRunner, package_response, return_text, tool_spec_for, truncate
from tools.sandbox.base import SandboxLimits
from tools.services import tool_upsert_from_source

LETTA_TIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} (AM|PM) UTC\+0000$")


def _builtin(name: str) -> ToolSpec:
    return ToolSpec(name=name, kind="builtin", json_schema={"name": name, "parameters": parameters({})})


def _runner_with(*tools: BuiltinTool, **kwargs) -> DefaultToolRunner:
    return DefaultToolRunner(registry=BuiltinRegistry(tools), limits=FAST_LIMITS, **kwargs)


@pytest.mark.parametrize(
    ("value", "tool_return"),
    [
        ("7678972356997490447", "7678972356997490447"),
        (None, "None"),
        ({"temp": 21.5, "city": "Zürich"}, '{"temp": 21.5, "city": "Zürich"}'),
        ([1, 2], "[1, 2]"),
        (True, "true"),
    ],
)
async def test_it_gives_the_raw_return_as_text_and_packages_it_for_the_model(value, tool_return):
    async def run(arguments, context):
        return value

    runner = _runner_with(BuiltinTool("answer", "letta_builtin", "", parameters({}), run))
    outcome = await runner.run(_builtin("answer"), "{}", NO_CONTEXT)
    assert outcome.status == "success"
    assert outcome.tool_return == tool_return
    packaged = model_view(outcome)
    assert packaged["status"] == "OK"
    assert packaged["message"] == tool_return
    assert LETTA_TIME.match(packaged["time"])
    assert outcome.stdout == outcome.stderr == []


async def test_it_cuts_what_the_model_reads_at_the_return_char_limit_with_a_visible_notice(runner):
    spec = source_spec("def long_text() -> str:\n    return 'a' * 12445\n", return_char_limit=100)
    outcome = await runner.run(spec, "{}", NO_CONTEXT)
    assert outcome.tool_return == "a" * 12445
    assert model_view(outcome)["message"] == "a" * 100 + "... [truncated: 12345 more characters]"


async def test_it_cuts_error_messages_at_the_return_char_limit_too(runner):
    spec = source_spec("def fail() -> str:\n    raise ValueError('x' * 500)\n", return_char_limit=50)
    outcome = await runner.run(spec, "{}", NO_CONTEXT)
    message = model_view(outcome)["message"]
    assert message.startswith("Error executing function fail: ValueError: xxx")
    assert message.endswith(" more characters]")
    assert model_view(outcome)["status"] == "Failed"


def test_truncate_leaves_text_within_the_limit_alone():
    assert truncate("abc", 3) == "abc"
    assert truncate("abcd", 3) == "abc... [truncated: 1 more characters]"


def test_package_response_is_lettas_status_message_time_object():
    assert json.loads(package_response(ok=False, message="boom", limit=10)).keys() == {"status", "message", "time"}
    assert return_text({"a": "é"}) == '{"a": "é"}'


async def test_it_never_executes_a_client_side_tool(process_sandbox):
    marker_dir = Path(tempfile.mkdtemp(prefix="client-tool-"))
    marker_dir.chmod(0o777)
    marker = marker_dir / "executed"
    source = f"def pick_color() -> str:\n    open({str(marker)!r}, 'w').write('ran')\n    return 'blue'\n"
    runner = DefaultToolRunner(sandbox=process_sandbox, limits=FAST_LIMITS)
    try:
        client_outcome = await runner.run(source_spec(source, kind="client"), "{}", NO_CONTEXT)
        ran_as_client = marker.exists()
        source_outcome = await runner.run(source_spec(source, kind="source"), "{}", NO_CONTEXT)
        ran_as_source = marker.exists()
    finally:
        marker.unlink(missing_ok=True)
        marker_dir.rmdir()
    assert client_outcome.status == "error"
    assert client_outcome.tool_return == (
        "pick_color is a client-side tool: the server never runs it. The client must supply its result "
        "through an approval response (a 'tool' return)."
    )
    assert ran_as_client is False
    assert source_outcome.tool_return == "blue"  # the same code as a source tool does run
    assert ran_as_source is True


async def test_it_rejects_bad_arguments_without_running_the_tool(runner):
    spec = source_spec("def roll(num_sides: int) -> str:\n    raise AssertionError('must not run')\n")
    outcome = await runner.run(spec, '{"num_sides": "six"}', NO_CONTEXT)
    assert outcome.status == "error"
    assert outcome.tool_return == (
        "Invalid arguments for tool 'roll': argument 'num_sides' must be of type integer, got \"six\""
    )


async def test_it_passes_coerced_arguments_to_a_source_tool(runner):
    spec = source_spec("def kinds(n: int, x: float) -> str:\n    return f'{type(n).__name__} {type(x).__name__}'\n")
    outcome = await runner.run(spec, '{"n": "6", "x": 6}', NO_CONTEXT)
    assert outcome.tool_return == "int float"


async def test_a_builtins_tool_error_becomes_an_error_result():
    async def run(arguments, context):
        raise ToolError("The city is unknown.")

    outcome = await _runner_with(BuiltinTool("weather", "letta_builtin", "", parameters({}), run)).run(
        _builtin("weather"), "{}", NO_CONTEXT
    )
    assert (outcome.status, outcome.tool_return) == ("error", "The city is unknown.")


async def test_a_builtins_unexpected_exception_becomes_an_error_result_not_a_crash():
    async def run(arguments, context):
        return {}["missing"]

    outcome = await _runner_with(BuiltinTool("buggy", "letta_builtin", "", parameters({}), run)).run(
        _builtin("buggy"), "{}", NO_CONTEXT
    )
    assert (outcome.status, outcome.tool_return) == (
        "error",
        "Error executing function buggy: an internal error (KeyError); the details are in the server log.",
    )


async def test_a_builtin_that_hangs_is_stopped_at_the_wall_clock_limit():
    async def run(arguments, context):
        await asyncio.sleep(3600)

    runner = DefaultToolRunner(
        registry=BuiltinRegistry([BuiltinTool("stuck", "letta_builtin", "", parameters({}), run)]),
        limits=SandboxLimits(wall_seconds=0.2),
    )
    outcome = await runner.run(_builtin("stuck"), "{}", NO_CONTEXT)
    assert (outcome.status, outcome.tool_return) == ("error", "stuck did not finish within 0.2 s.")


async def test_a_builtin_gets_validated_arguments_and_the_context():
    seen = {}

    async def run(arguments, context):
        seen.update(arguments=arguments, agent=context.agent_id)
        return "ok"

    tool = BuiltinTool("echo", "letta_builtin", "", parameters({"n": prop("integer", "n")}, ["n"]), run)
    spec = ToolSpec(name="echo", kind="builtin", json_schema=tool.json_schema)
    await _runner_with(tool).run(spec, '{"n": "3"}', ToolContext(organization_id=1, agent_id="agent-x"))
    assert seen == {"arguments": {"n": 3}, "agent": "agent-x"}


async def test_an_unknown_builtin_is_an_error_result():
    outcome = await _runner_with().run(_builtin("nonexistent"), "{}", NO_CONTEXT)
    assert outcome.tool_return == "The built-in tool nonexistent is not available on this server."


async def test_an_invalid_tool_variable_is_an_error_result_before_anything_runs(runner):
    context = ToolContext(organization_id=None, agent_id=None, env_vars={"BAD NAME": "x"})
    outcome = await runner.run(source_spec("def f() -> str:\n    return 'ran'\n"), "{}", context)
    assert outcome.status == "error"
    assert "'BAD NAME' cannot be used" in outcome.tool_return


async def test_a_source_tool_without_source_is_an_error_result(runner):
    spec = ToolSpec(name="empty", kind="source", json_schema={"name": "empty", "parameters": parameters({})})
    outcome = await runner.run(spec, "{}", NO_CONTEXT)
    assert outcome.tool_return == "empty has no source code to run."


async def test_with_source_tools_disabled_a_call_says_so(settings):
    settings.TOOL_SANDBOX_BACKEND = "disabled"
    outcome = await DefaultToolRunner().run(source_spec("def f() -> str:\n    return 'x'\n"), "{}", NO_CONTEXT)
    assert outcome.status == "error"
    assert outcome.tool_return == "Source tools are disabled on this server (TOOL_SANDBOX_BACKEND=disabled)."


async def test_it_reads_the_limits_from_settings_by_default(settings, sandbox):
    settings.TOOL_SANDBOX_WALL_SECONDS = 1
    outcome = await DefaultToolRunner(sandbox=sandbox).run(
        source_spec("def wait() -> str:\n    import time\n    time.sleep(60)\n"), "{}", NO_CONTEXT
    )
    assert outcome.tool_return == "The tool did not finish within 1 s and was stopped."


@pytest.mark.django_db
def test_tool_spec_for_uses_the_agents_approval_override(cast):
    agent_tool = AgentToolFactory(agent__organization=cast.org_a, tool__default_requires_approval=True)
    assert tool_spec_for(agent_tool).requires_approval is True
    agent_tool.requires_approval = False
    spec = tool_spec_for(agent_tool)
    assert spec.requires_approval is False
    assert (spec.name, spec.kind, spec.tool_id) == (agent_tool.tool.name, "source", agent_tool.tool.public_id)
    assert spec.source_code == agent_tool.tool.source_code
    assert spec.return_char_limit == 50_000


@pytest.mark.django_db
def test_a_tool_created_from_source_runs_end_to_end(cast, sandbox):
    tool = tool_upsert_from_source(organization=cast.org_a, source_code=ROLL_DICE_SOURCE)
    agent_tool = AgentToolFactory(agent__organization=cast.org_a, tool=tool)
    runner = DefaultToolRunner(sandbox=sandbox, limits=FAST_LIMITS)
    context = ToolContext(organization_id=cast.org_a.pk, agent_id=agent_tool.agent_id)
    outcome = async_to_sync(runner.run)(tool_spec_for(agent_tool), '{"num_sides": "6"}', context)
    assert outcome.status == "success"
    assert 1 <= int(outcome.tool_return) <= 6
