"""Tool rules this server does not enforce are refused when saved, never silently ignored."""

from __future__ import annotations

import pytest

from agents.models import Agent

RULES = {
    "conditional": {"tool_name": "roll_dice", "type": "conditional", "child_output_mapping": {"6": "roll_dice"}},
    "parent_last_tool": {"tool_name": "roll_dice", "type": "parent_last_tool", "children": ["roll_dice"]},
}


@pytest.mark.django_db
@pytest.mark.parametrize("kind", sorted(RULES))
def test_creating_an_agent_with_an_unenforced_rule_is_a_400_naming_it(alice_api, kind):
    body = {"name": "ruled", "model": "demo/echo-1", "tool_rules": [RULES[kind]]}

    response = alice_api.post("/v1/agents/", body, format="json")

    assert response.status_code == 400
    assert f"'{kind}'" in response.json()["detail"]
    assert not Agent.objects.filter(name="ruled").exists()


@pytest.mark.django_db
def test_modifying_an_agent_with_an_unenforced_rule_is_a_400_and_changes_nothing(alice_api):
    agent = alice_api.post("/v1/agents/", {"name": "ruled", "model": "demo/echo-1"}, format="json").json()

    response = alice_api.patch(f"/v1/agents/{agent['id']}", {"tool_rules": [RULES["conditional"]]}, format="json")

    assert response.status_code == 400
    assert Agent.objects.get(name="ruled").tool_rules == []


@pytest.mark.django_db
def test_enforced_rules_are_still_accepted(alice_api):
    body = {"name": "ruled", "model": "demo/echo-1", "tool_rules": [{"tool_name": "roll_dice", "type": "exit_loop"}]}

    assert alice_api.post("/v1/agents/", body, format="json").status_code == 200
