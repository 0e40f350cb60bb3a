"""Letta tool rules, as a pure solver over the tools called so far in a turn.

Supported rule types: ``run_first`` (init), ``exit_loop`` (terminal),
``continue_loop``, ``constrain_child_tools`` (child), ``required_before_exit``,
``max_count_per_step``. ``continue_loop`` needs no code: after any tool call the loop
always steps again so the model reads the results. ``requires_approval`` is not a rule here: approval is a
property of the attached tool (``ToolSpec.requires_approval``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

RULE_TYPES = {
    "run_first",
    "exit_loop",
    "continue_loop",
    "constrain_child_tools",
    "required_before_exit",
    "max_count_per_step",
    "requires_approval",
    "conditional",
    "parent_last_tool",
}


@dataclass(frozen=True)
class ToolRules:
    rules: tuple[dict[str, Any], ...]

    @classmethod
    def from_json(cls, rules: list[dict[str, Any]] | None) -> ToolRules:
        return cls(tuple(rule for rule in rules or () if isinstance(rule, dict)))

    def _names(self, rule_type: str) -> set[str]:
        return {r["tool_name"] for r in self.rules if r.get("type") == rule_type and r.get("tool_name")}

    def is_terminal(self, name: str) -> bool:
        return name in self._names("exit_loop")

    def children_of(self, name: str) -> list[str] | None:
        for rule in self.rules:
            if rule.get("type") == "constrain_child_tools" and rule.get("tool_name") == name:
                return list(rule.get("children") or [])
        return None

    def violation(self, name: str, called: list[str], available: set[str]) -> str | None:
        """Why calling ``name`` now breaks a rule, or ``None`` when it is allowed."""
        init_tools = self._names("run_first") & available
        if not called and init_tools and name not in init_tools:
            return f"Tool rule violation: the first tool called must be one of {sorted(init_tools)}."
        if called:
            children = self.children_of(called[-1])
            if children is not None and name not in children:
                return f"Tool rule violation: after {called[-1]!r} only {sorted(children)} may be called, not {name!r}."
        counts = Counter(called)
        for rule in self.rules:
            if rule.get("type") == "max_count_per_step" and rule.get("tool_name") == name:
                limit = int(rule.get("max_count_limit") or 0)
                if counts[name] >= limit:
                    return f"Tool rule violation: {name!r} may be called at most {limit} times in a turn."
        return None

    def uncalled_required(self, called: list[str], available: set[str]) -> list[str]:
        return sorted((self._names("required_before_exit") & available) - set(called))
