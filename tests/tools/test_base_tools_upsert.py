"""base_tools_upsert: Letta's add-base-tools set, per organization, idempotent and honest."""

from __future__ import annotations

import pytest

from tools.models import Tool, ToolKind
from tools.services import base_tools_upsert, tool_create

pytestmark = pytest.mark.django_db

# The 24 tools a real Letta 0.13.0 server returns from POST /v1/tools/add-base-tools.
LETTA_BASE_TOOLS = {
    "memory": "letta_memory_core",
    "store_memories": "letta_voice_sleeptime_core",
    "web_search": "letta_builtin",
    "archival_memory_insert": "letta_core",
    "rethink_user_memory": "letta_voice_sleeptime_core",
    "grep_files": "letta_files_core",
    "send_message_to_agents_matching_tags": "letta_multi_agent_core",
    "memory_finish_edits": "letta_sleeptime_core",
    "core_memory_replace": "letta_memory_core",
    "finish_rethinking_memory": "letta_voice_sleeptime_core",
    "fetch_webpage": "letta_builtin",
    "open_files": "letta_files_core",
    "conversation_search": "letta_core",
    "run_code": "letta_builtin",
    "send_message": "letta_core",
    "memory_replace": "letta_sleeptime_core",
    "search_memory": "letta_voice_sleeptime_core",
    "memory_insert": "letta_sleeptime_core",
    "core_memory_append": "letta_memory_core",
    "archival_memory_search": "letta_core",
    "send_message_to_agent_and_wait_for_reply": "letta_multi_agent_core",
    "memory_rethink": "letta_sleeptime_core",
    "send_message_to_agent_async": "letta_multi_agent_core",
    "semantic_search_files": "letta_files_core",
}
WORKING = {
    "memory",
    "send_message",
    "conversation_search",
    "run_code",
    "web_search",
    "fetch_webpage",
    "get_current_time",
    "memory_insert",
    "memory_replace",
    "memory_rethink",
    "memory_finish_edits",
    "core_memory_append",
    "core_memory_replace",
    "archival_memory_insert",
    "archival_memory_search",
    "open_files",
    "grep_files",
    "semantic_search_files",
}


def test_it_creates_every_letta_base_tool_with_its_tool_type(cast):
    tools = base_tools_upsert(organization=cast.org_a)
    by_name = {tool.name: tool for tool in tools}
    assert {name: by_name[name].tool_type for name in LETTA_BASE_TOOLS} == LETTA_BASE_TOOLS
    assert set(by_name) == set(LETTA_BASE_TOOLS) | {"get_current_time"}
    assert Tool.objects.for_org(cast.org_a).filter(kind=ToolKind.BUILTIN).count() == len(tools)


def test_the_tools_it_cannot_perform_say_so_and_are_marked_unavailable(cast):
    for tool in base_tools_upsert(organization=cast.org_a):
        available = tool.name in WORKING
        assert tool.metadata == {"available": available}
        assert ("NOT AVAILABLE on this server" in tool.description) is not available
        assert tool.json_schema["name"] == tool.name
        assert tool.json_schema["parameters"]["type"] == "object"


def test_running_it_again_updates_the_same_rows_and_keeps_the_organizations_choices(cast):
    first = {tool.name: tool.pk for tool in base_tools_upsert(organization=cast.org_a)}
    Tool.objects.filter(pk=first["run_code"]).update(default_requires_approval=True, description="stale")
    second = base_tools_upsert(organization=cast.org_a)
    assert {tool.name: tool.pk for tool in second} == first
    run_code = Tool.objects.get(pk=first["run_code"])
    assert run_code.default_requires_approval is True
    assert run_code.description != "stale"


def test_each_organization_gets_its_own_built_ins(cast):
    mine = {tool.pk for tool in base_tools_upsert(organization=cast.org_a)}
    theirs = {tool.pk for tool in base_tools_upsert(organization=cast.org_b)}
    assert not mine & theirs
    assert set(Tool.objects.for_org(cast.org_b).values_list("pk", flat=True)) == theirs


def test_an_organizations_own_tool_of_the_same_name_is_left_alone(cast):
    own = tool_create(organization=cast.org_a, source_code="def run_code(code: str) -> str:\n    return code\n")
    tools = base_tools_upsert(organization=cast.org_a)
    assert "run_code" not in {tool.name for tool in tools}
    assert Tool.objects.get(pk=own.pk).kind == ToolKind.SOURCE
