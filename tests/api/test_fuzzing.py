"""Schema-driven fuzzing of the whole ``/v1`` API (schemathesis) against a live server.

Every operation of the served ``/v1/openapi.json`` gets ``EXAMPLES_PER_OPERATION``
generated requests, valid and invalid, derandomized (the same ones every run),
authenticated with the server's key. Path parameters and list cursors are real ids
of the key's organization most of the time, so requests reach the code behind the
404 (an agent waiting for an approval among them), with spare ids for the deleting
operations. No request may answer a 5xx or log a traceback, and every answer must
match the schema: documented status, content type, body (SSE events included).
The server runs on the suite's database engine, so on Postgres what only Postgres
refuses is exercised too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from tests.support.live_server import start_inprocess_server
from tests.tool_sources import DICE_SOURCE, SECRET_SOURCE

if TYPE_CHECKING:
    from collections.abc import Iterator

    from schemathesis import Case
    from schemathesis.specs.openapi.schemas import OpenApiSchema

    from tests.fake_llm.server import FakeLLMServer
    from tests.support.live_server import LiveServer

pytestmark = [pytest.mark.live_server, pytest.mark.timeout(300)]

EXAMPLES_PER_OPERATION = 40
# Request schemas describe shapes: some rules are beyond them (an approval goes alone in
# ``messages``; which fields a tool rule type needs; a tool's source must define a function;
# NUL characters are refused), and unknown parameters are ignored, as on Letta.
NOT_ENFORCED = {"positive_data_acceptance": {"enabled": False}, "negative_data_rejection": {"enabled": False}}
REAL_ID_PROBABILITY = 0.8
# Cursors of the lists are ids of their own rows.
CURSORS = ("after", "before")
LISTS_BY_CURSOR = {
    "agents_list": "agents",
    "tools_list": "tools",
    "runs_list": "runs",
    "agents_messages_list": "messages",
    "blocks_list": "blocks",
    "agents_blocks_list": "blocks",
    "agents_passages_list": "passages",
    "agents_tools_list": "tools",
    "runs_messages_list": "messages",
    "runs_steps_list": "steps",
    "steps_list": "steps",
}
# Now and then a string is one that Postgres cannot store (on SQLite it is stored).
HOSTILE_TEXT = {"hostile": {"values": ["\x00", "a NUL \x00 inside"]}}


def _tool(api: httpx.Client, source: str, **fields: Any) -> str:
    return str(api.put("/v1/tools/", json={"source_code": source, **fields}).raise_for_status().json()["id"])


def _agent(api: httpx.Client, name: str, **fields: Any) -> str:
    return str(api.post("/v1/agents/", json={"name": name, **fields}).raise_for_status().json()["id"])


def _turn(api: httpx.Client, agent_id: str, text: str) -> dict[str, Any]:
    body = {"messages": [{"role": "user", "content": text}]}
    return api.post(f"/v1/agents/{agent_id}/messages", json=body).raise_for_status().json()


def _seed(api: httpx.Client) -> dict[str, Any]:
    """Rows of every kind for the fuzzer to aim at, and spare ones for the operations that delete."""
    dice = _tool(api, DICE_SOURCE)
    secret = _tool(api, SECRET_SOURCE, default_requires_approval=True)
    built_in = api.post("/v1/tools/add-base-tools").raise_for_status().json()[0]
    demo = _agent(api, "fuzz-demo", model="demo/echo-1", tool_ids=[dice, secret])
    awaiting = _agent(api, "fuzz-awaiting-approval", model="demo/echo-1", tool_ids=[secret])
    _turn(api, awaiting, "call get_secret_code with input_text=fuzz")  # now waits for an approval
    anthropic = _agent(api, "fuzz-anthropic", model="anthropic/claude-sonnet-4-5-20250929", tool_ids=[dice])
    turns = [_turn(api, demo, "call roll_dice with num_sides=6"), _turn(api, anthropic, "hello")]
    spare_turns = [_turn(api, anthropic, f"spare {n}") for n in range(3)]
    run_ids = [turn["usage"]["run_ids"][0] for turn in turns]
    steps = api.get(f"/v1/runs/{run_ids[0]}/steps").raise_for_status().json()
    messages = api.get(f"/v1/agents/{demo}/messages").raise_for_status().json()
    spare_tools = [_tool(api, f"def spare_{n}() -> str:\n    return 'x'\n") for n in range(3)]
    blocks = [block["id"] for block in api.get(f"/v1/agents/{demo}/core-memory/blocks").raise_for_status().json()]
    spare_blocks = [
        api.post("/v1/blocks/", json={"label": f"spare-{n}", "value": "x"}).raise_for_status().json()["id"]
        for n in range(3)
    ]
    archive = f"/v1/agents/{demo}/archival-memory"
    passages = [api.post(archive, json={"text": f"fact {n}"}).raise_for_status().json()[0]["id"] for n in range(4)]
    return {
        "agents": [demo, anthropic, awaiting],
        "spare_agents": [_agent(api, f"spare-{n}") for n in range(3)],
        "tools": [dice, secret, built_in["id"]],
        "spare_tools": spare_tools,
        "tool_names": ["roll_dice", "get_secret_code", built_in["name"]],
        "runs": run_ids,
        "spare_runs": [turn["usage"]["run_ids"][0] for turn in spare_turns],
        "steps": [step["id"] for step in steps],
        "messages": [message["id"] for message in messages],
        "blocks": blocks,
        "spare_blocks": spare_blocks,
        "block_labels": ["human", "persona"],
        "passages": passages[:1],
        "spare_passages": passages[1:],
    }


def _binding(dictionary: str) -> dict[str, Any]:
    return {"dictionary": dictionary, "probability": REAL_ID_PROBABILITY}


def fuzz_config(ids: dict[str, list[str]]) -> schemathesis.Config:
    """Every check but ``NOT_ENFORCED``; path ids drawn from the seeded rows most of the time
    (the spare ones for the deleting operations)."""
    return schemathesis.Config.from_dict(
        {
            "checks": NOT_ENFORCED,
            "dictionaries": {name: {"values": values} for name, values in ids.items()} | HOSTILE_TEXT,
            "generation": {"dictionaries": {"string": {"dictionary": "hostile", "probability": 0.05}}},
            "parameters": {
                "path.agent_id": _binding("agents"),
                "path.tool_id": _binding("tools"),
                "path.tool_name": _binding("tool_names"),
                "path.run_id": _binding("runs"),
                "path.step_id": _binding("steps"),
                "path.block_id": _binding("blocks"),
                "path.block_label": _binding("block_labels"),
                "path.passage_id": _binding("passages"),
            },
            "operations": [
                {"include-operation-id": "agents_delete", "parameters": {"path.agent_id": _binding("spare_agents")}},
                {"include-operation-id": "tools_delete", "parameters": {"path.tool_id": _binding("spare_tools")}},
                {"include-operation-id": "runs_delete", "parameters": {"path.run_id": _binding("spare_runs")}},
                {"include-operation-id": "blocks_delete", "parameters": {"path.block_id": _binding("spare_blocks")}},
                {
                    "include-operation-id": "agents_passages_delete",
                    "parameters": {"path.passage_id": _binding("spare_passages")},
                },
                *(
                    {"include-operation-id": operation, "parameters": {f"query.{c}": _binding(rows) for c in CURSORS}}
                    for operation, rows in LISTS_BY_CURSOR.items()
                ),
            ],
        }
    )


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory, fake_llm_server: FakeLLMServer) -> Iterator[LiveServer]:
    """Runs in-process (no Redis), both providers answered by the fake LLM, on the suite's database engine."""
    # An agent the fuzzer moves to an OpenAI model still talks to the fake, never to the network.
    env = fake_llm_server.server_env(openai=True) | {"DEMO_TOKEN_DELAY": "0"}
    with start_inprocess_server(tmp_path_factory.mktemp("fuzzing"), extra_env=env) as server:
        yield server


@pytest.fixture(scope="module")
def api_schema(fuzz_server: LiveServer) -> OpenApiSchema:
    """The document the live server serves, with the seeded ids to aim at."""
    with fuzz_server.api() as api:
        ids = _seed(api)
    return schemathesis.openapi.from_url(f"{fuzz_server.url}/v1/openapi.json", config=fuzz_config(ids))


def _auth(server: LiveServer) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.api_key}"}


def _operation_ids() -> list[str]:
    """Every documented operation (generated in-process: the server serves this same document)."""
    from drf_spectacular.generators import SchemaGenerator

    document = SchemaGenerator().get_schema(request=None, public=True)
    return sorted(operation["operationId"] for path in document["paths"].values() for operation in path.values())


def _refused_by_twisted(case: Case, response: Any) -> bool:
    """A multipart body Twisted (under Daphne) cannot parse is answered by Twisted itself, before
    Django sees it: 400 with no body and no content type. A known limit of the server in front of
    the application, not an answer of ours (issue 25's closing note)."""
    multipart = "multipart/form-data" in (case.media_type or "")
    refused = response.status_code == 400 and not response.content and "Content-Type" not in response.headers
    return multipart and refused


@pytest.mark.parametrize("operation_id", _operation_ids())
def test_no_operation_answers_a_server_error_or_off_schema(
    operation_id: str, api_schema: OpenApiSchema, fuzz_server: LiveServer
) -> None:
    operation = api_schema.find_operation_by_id(operation_id)
    logged_before = len(fuzz_server.log())

    @given(
        case=st.one_of(operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE))
    )
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(case: Case) -> None:
        response = case.call(base_url=fuzz_server.url, headers=_auth(fuzz_server), timeout=30)
        if _refused_by_twisted(case, response):
            return
        case.validate_response(response)

    fuzz()
    # A failure inside an SSE body cannot change the status any more: the server's log tells.
    assert "Traceback" not in fuzz_server.log()[logged_before:]
