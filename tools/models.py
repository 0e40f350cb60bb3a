from __future__ import annotations

from typing import ClassVar

from django.core.exceptions import ValidationError
from django.db import models

from accounts.scoping import AuthoredModel, OrgScopedQuerySet, PublicIdModel
from tools.conditions import ConditionError, check_condition

DEFAULT_RETURN_CHAR_LIMIT = 50_000


class ToolKind(models.TextChoices):
    SOURCE = "source", "Python source (sandboxed)"
    BUILTIN = "builtin", "Built-in server tool"
    CLIENT = "client", "Client-side (answered through approvals)"
    MCP = "mcp", "MCP server tool"


class Tool(AuthoredModel, PublicIdModel):
    id_prefix = "tool"

    organization = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="tools")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    json_schema = models.JSONField(default=dict, blank=True)
    args_json_schema = models.JSONField(
        null=True,
        blank=True,
        help_text="Parameters given by the client, used instead of those derived from the source.",
    )
    kind = models.CharField(max_length=10, choices=ToolKind.choices, default=ToolKind.SOURCE)
    tool_type = models.CharField(
        max_length=40, default="custom", help_text="Letta's tool_type on the wire (custom, letta_core, …)."
    )
    source_code = models.TextField(blank=True)
    source_type = models.CharField(max_length=20, default="python")
    default_requires_approval = models.BooleanField(default=False)
    return_char_limit = models.PositiveIntegerField(default=DEFAULT_RETURN_CHAR_LIMIT)
    enable_parallel_execution = models.BooleanField(default=False)
    tags = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    objects = OrgScopedQuerySet.as_manager()

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["organization", "name"], name="unique_tool_name_per_org"),
        ]
        ordering: ClassVar = ["name"]

    def __str__(self) -> str:
        return self.name


class AgentToolQuerySet(models.QuerySet):
    def for_org(self, organization: object) -> AgentToolQuerySet:
        if organization is None:
            return self.none()
        return self.filter(agent__organization=organization)


class ApprovalPolicy(models.TextChoices):
    """Whether an agent's calls of a tool wait for a person (DESIGN §13)."""

    INHERIT = "inherit", "Tool default"
    ASK = "ask", "Always ask"
    ALLOW = "allow", "Never ask"
    ASK_WHEN = "ask_when", "Ask when a condition holds"


class AgentTool(models.Model):
    """A tool attached to an agent, with the agent's own approval policy for it.

    ``approval_policy`` is the one source of truth for approval. Letta's boolean override
    (``requires_approval``: ``None`` inherits the tool's default) is a view of it:
    ``True`` is ``ask``, ``False`` is ``allow``, ``None`` is ``inherit``; ``ask_when``
    reads as ``True`` (its calls may wait).
    """

    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="agent_tools")
    tool = models.ForeignKey(Tool, on_delete=models.CASCADE, related_name="agent_tools")
    approval_policy = models.CharField(
        max_length=10,
        choices=ApprovalPolicy.choices,
        default=ApprovalPolicy.INHERIT,
        help_text="Whether calls wait for a person: the tool's default, always, never, or when a condition holds.",
    )
    approval_condition = models.TextField(
        blank=True,
        help_text='With "ask when": a rule over the call\'s arguments, e.g. amount > 100 or path startswith "/etc".',
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AgentToolQuerySet.as_manager()

    class Meta:
        constraints: ClassVar = [
            models.UniqueConstraint(fields=["agent", "tool"], name="unique_agent_tool"),
        ]

    def __str__(self) -> str:
        return f"{self.tool} on {self.agent}"

    def clean(self) -> None:
        """The admin's check (the services raise the same message as ``InvalidArgument``)."""
        tool = getattr(self, "tool", None)  # not chosen yet on a new row
        problem = condition_problem(self.approval_policy, self.approval_condition, tool)
        if problem:
            raise ValidationError({"approval_condition": problem})

    @property
    def requires_approval(self) -> bool | None:
        """Letta's override, derived from the policy (``None``: the tool's default applies)."""
        if self.approval_policy == ApprovalPolicy.INHERIT:
            return None
        return self.approval_policy != ApprovalPolicy.ALLOW

    @requires_approval.setter
    def requires_approval(self, value: bool | None) -> None:
        self.approval_policy = policy_for_override(value)
        self.approval_condition = ""

    @property
    def effective_requires_approval(self) -> bool:
        """Whether calls may wait for a person (``ask_when`` counts: some of its calls do)."""
        if self.requires_approval is None:
            return self.tool.default_requires_approval
        return self.requires_approval

    @property
    def effective_policy(self) -> str:
        """``ask``, ``allow`` or ``ask_when``: the policy with ``inherit`` resolved from the tool's default."""
        if self.approval_policy == ApprovalPolicy.INHERIT:
            return ApprovalPolicy.ASK if self.tool.default_requires_approval else ApprovalPolicy.ALLOW
        return self.approval_policy


def condition_problem(policy: str, condition: str, tool: Tool | None) -> str | None:
    """Why ``condition`` cannot go with ``policy`` on ``tool``, or ``None`` when it can.

    ``ask_when`` needs a condition that parses and reads only the tool's arguments.
    """
    if policy != ApprovalPolicy.ASK_WHEN:
        return None
    if not condition.strip():
        return "An 'ask when' policy needs a condition, e.g. amount > 100."
    parameters = ((tool.json_schema if tool is not None else None) or {}).get("parameters") or {}
    try:
        check_condition(condition.strip(), parameters)
    except ConditionError as exc:
        return f"Invalid approval condition: {exc}"
    return None


def policy_for_override(requires_approval: bool | None) -> str:
    """The policy Letta's boolean override stands for: ``True`` → ask, ``False`` → allow, ``None`` → inherit."""
    if requires_approval is None:
        return ApprovalPolicy.INHERIT
    return ApprovalPolicy.ASK if requires_approval else ApprovalPolicy.ALLOW
