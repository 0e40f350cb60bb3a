"""Letta tool rules as a pure solver over the tools called so far in a turn, and the
loop's decision after each step (``decide_after_step``): continue, or why to stop.

Supported rule types: ``run_first`` (init), ``exit_loop`` (terminal),
``continue_loop``, ``constrain_child_tools`` (child), ``required_before_exit``,
``max_count_per_step``. ``conditional`` and ``parent_last_tool`` are refused when an
agent is saved (``agents.services``). ``continue_loop`` needs no code: after any tool call the loop
always steps again so the model reads the results. ``requires_approval`` is not a rule here: approval is a
property of the attached tool (``ToolSpec.requires_approval``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from agents.engine.stop import StopReason

# A cut-off answer (the output limit) is continued this many times before the turn ends.
MAX_TRUNCATION_CONTINUES = 2


@dataclass(frozen=True)
class ToolRules:
    rules: tuple[dict[str, Any], ...]

    @classmethod
    def from_json(cls, rules: list[Any] | None) -> ToolRules:
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


@dataclass(frozen=True)
class StepFacts:
    """What a finished step produced, as far as deciding what comes next is concerned."""

    truncated: bool  # the answer hit the output limit (its tool calls were dropped)
    truncations: int  # cut-off answers so far in this turn, this one included
    has_tool_calls: bool
    awaits_approval: bool  # a call waits for a human: the batch did not run
    terminal_tool_ran: bool  # a terminal tool of this step's batch succeeded
    uncalled_required: tuple[str, ...]  # required-before-exit tools not called yet this turn
    steps: int
    max_steps: int


def decide_after_step(facts: StepFacts) -> StopReason | None:
    """Why the turn stops after this step, or ``None`` to call the model again."""
    if facts.truncated:
        stop = None if facts.truncations <= MAX_TRUNCATION_CONTINUES else StopReason.END_TURN
    elif not facts.has_tool_calls:
        stop = None if facts.uncalled_required else StopReason.END_TURN
    elif facts.awaits_approval:
        stop = StopReason.REQUIRES_APPROVAL
    elif facts.terminal_tool_ran:
        stop = StopReason.TOOL_RULE
    else:
        stop = None
    if stop is None and facts.steps >= facts.max_steps:
        return StopReason.MAX_STEPS
    return stop


TRUNCATION_NOTICE = (
    "[System notice] Your previous answer was cut off at the output limit and any tool call in it was "
    "dropped. Continue exactly where you stopped; re-issue a tool call if you still need it."
)


def step_notice(*, truncated: bool, uncalled_required: tuple[str, ...] | list[str]) -> str | None:
    """The notice stored with an assistant row to tell the model why the turn goes on."""
    if truncated:
        return TRUNCATION_NOTICE
    if uncalled_required:
        required = list(uncalled_required)
        return f"[System notice] Continuing: the user expects these tools to be called before you finish: {required}."
    return None
