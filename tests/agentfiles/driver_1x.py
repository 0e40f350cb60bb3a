"""Agent files through letta-client 1.x, run by the SDK's own interpreter against a live server.

Usage: ``python driver_1x.py BASE_URL API_KEY FIXTURES_DIR``; prints one JSON object with, per
example file, the ids ``agents.import_file`` answered, and the round trip through ``export_file``.
It imports nothing from the project.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import letta_client
from letta_client import BadRequestError, Letta


def main(base_url: str, api_key: str, fixtures: str) -> dict[str, Any]:
    client = Letta(base_url=base_url, api_key=api_key)
    report: dict[str, Any] = {"version": letta_client.__version__, "imports": {}}
    for path in sorted(Path(fixtures).glob("*.af")):
        with path.open("rb") as handle:
            answer = client.agents.import_file(file=(path.name, handle), model="demo/echo-1")
        first = answer.agent_ids[0]
        agent = client.agents.retrieve(first)
        report["imports"][path.name] = {
            "agent_ids": answer.agent_ids,
            "name": agent.name,
            "blocks": sorted(block.label for block in agent.memory.blocks),
            "tools": sorted(tool.name for tool in agent.tools),
            "rules": sorted(f"{rule.type}:{rule.tool_name}" for rule in agent.tool_rules or []),
            "warnings": (answer.model_extra or {}).get("warnings"),
        }
    loop = report["imports"]["v2-297e8217e952_loop.af"]["agent_ids"][0]
    exported = client.agents.export_file(loop)
    again = client.agents.import_file(file=("loop.af", exported.encode()), append_copy_suffix=False)
    report["round_trip"] = {
        "exported_type": type(exported).__name__,
        "first": json.loads(exported),
        "second": json.loads(client.agents.export_file(again.agent_ids[0])),
    }
    try:
        client.agents.import_file(file=("bad.af", b"{not json"))
    except BadRequestError as exc:
        report["bad"] = {"status": exc.status_code, "body": exc.body}
    reply = client.agents.messages.create(agent_id=loop, messages=[{"role": "user", "content": "hello"}])
    report["answer"] = [message.message_type for message in reply.messages]
    report["recompiled"] = client.agents.recompile(loop)
    return report


if __name__ == "__main__":
    sys.stdout.write(json.dumps(main(*sys.argv[1:4]), default=str) + "\n")
