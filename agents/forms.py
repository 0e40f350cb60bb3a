"""Forms of the agent pages: create and edit an agent, with its tools and their approval policy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from django import forms

from agents.llm.registry import model_choices
from agents.models import DEFAULT_SYSTEM_PROMPT
from folders.models import Folder, FolderAgent
from tools.conditions import MAX_CONDITION_CHARS
from tools.models import AgentTool, ApprovalPolicy, Tool, condition_problem

if TYPE_CHECKING:
    from django.forms import BoundField
    from django.forms.boundfield import BoundWidget

    from accounts.models import Organization
    from agents.models import Agent


@dataclass(frozen=True)
class ToolRow:
    """One line of the tools fieldset: attach the tool, and how its calls are approved."""

    tool: Tool
    attach: BoundWidget
    approval: BoundField
    condition: BoundField


class AgentForm(forms.Form):
    name = forms.CharField(max_length=200, widget=forms.TextInput(attrs={"autocomplete": "off"}))
    model = forms.ChoiceField(
        label="Model",
        help_text=(
            "Grouped by provider, with each model's context window. The demo model runs offline without an "
            "API key; others appear once their provider (Providers page) lists them."
        ),
    )
    system = forms.CharField(
        label="System prompt",
        required=False,
        initial=DEFAULT_SYSTEM_PROMPT,
        widget=forms.Textarea(attrs={"rows": 6}),
    )
    tools = forms.ModelMultipleChoiceField(
        queryset=Tool.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        to_field_name="pk",
    )

    folders = forms.ModelMultipleChoiceField(
        queryset=Folder.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        to_field_name="pk",
        help_text="The agent reads their files with open_files, grep_files and semantic_search_files "
        "(attached with the first folder).",
    )

    def __init__(self, *args: Any, organization: Organization, agent: Agent | None = None, **kwargs: Any) -> None:
        if agent is not None and "initial" not in kwargs:
            kwargs["initial"] = {"name": agent.name, "model": agent.model, "system": agent.system}
        super().__init__(*args, **kwargs)
        self.agent = agent
        self.org_tools = list(Tool.objects.for_org(organization).order_by("name"))
        model_field = cast("forms.ChoiceField", self.fields["model"])
        model_field.choices = model_choices(organization=organization, current=agent.model if agent else None)
        tools_field = cast("forms.ModelMultipleChoiceField[Tool]", self.fields["tools"])
        tools_field.queryset = Tool.objects.for_org(organization).order_by("name")
        folders_field = cast("forms.ModelMultipleChoiceField[Folder]", self.fields["folders"])
        folders_field.queryset = Folder.objects.for_org(organization).order_by("name")
        attached: dict[Any, AgentTool] = {}
        if agent is not None:
            attached = {at.tool_id: at for at in AgentTool.objects.filter(agent=agent)}
            self.initial.setdefault("tools", [str(pk) for pk in attached])
            linked = FolderAgent.objects.filter(agent=agent).values_list("folder_id", flat=True)
            self.initial.setdefault("folders", [str(pk) for pk in linked])
        for tool in self.org_tools:
            at = attached.get(tool.pk)
            default = "asks" if tool.default_requires_approval else "does not ask"
            self.fields[self.approval_field(tool)] = forms.ChoiceField(
                label=f"Approval for {tool.name}",
                choices=ApprovalPolicy.choices,
                initial=at.approval_policy if at else ApprovalPolicy.INHERIT,
                help_text=f"By default {tool.name} {default} a person before it runs.",
            )
            self.fields[self.condition_field(tool)] = forms.CharField(
                label=f"Ask when (condition for {tool.name})",
                required=False,
                max_length=MAX_CONDITION_CHARS,
                initial=at.approval_condition if at else "",
                widget=forms.TextInput(attrs={"autocomplete": "off", "placeholder": "e.g. amount > 100"}),
                help_text='With "Ask when a condition holds": e.g. amount > 100, path startswith "/etc".',
            )

    @staticmethod
    def approval_field(tool: Tool) -> str:
        return f"approval_{tool.pk.hex}"

    @staticmethod
    def condition_field(tool: Tool) -> str:
        return f"condition_{tool.pk.hex}"

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for tool in cleaned.get("tools") or []:
            policy = cleaned.get(self.approval_field(tool), ApprovalPolicy.INHERIT)
            problem = condition_problem(policy, cleaned.get(self.condition_field(tool)) or "", tool)
            if problem:
                self.add_error(self.condition_field(tool), problem)
        return cleaned

    def tool_rows(self) -> list[ToolRow]:
        attach = {str(widget.data["value"]): widget for widget in self["tools"]}
        return [
            ToolRow(
                tool=tool,
                attach=attach[str(tool.pk)],
                approval=self[self.approval_field(tool)],
                condition=self[self.condition_field(tool)],
            )
            for tool in self.org_tools
            if str(tool.pk) in attach
        ]

    def chosen_folders(self) -> list[Folder]:
        return list(self.cleaned_data["folders"])

    def chosen_tools(self) -> list[Tool]:
        return list(self.cleaned_data["tools"])

    def approval_policies(self) -> dict[str, tuple[str, str]]:
        """``tool name → (policy, condition)`` for every attached tool."""
        return {
            tool.name: (self.cleaned_data[self.approval_field(tool)], self.cleaned_data[self.condition_field(tool)])
            for tool in self.chosen_tools()
        }


class AgentSearchForm(forms.Form):
    q = forms.CharField(label="Search agents", required=False, max_length=200)


class PassageSearchForm(forms.Form):
    q = forms.CharField(label="Search archival memory", required=False, max_length=500)


class PassageForm(forms.Form):
    """A new passage of an agent's archival memory: its text, and tags separated by commas."""

    text = forms.CharField(label="Text", widget=forms.Textarea(attrs={"rows": 3}), max_length=100_000)
    tags = forms.CharField(
        label="Tags", required=False, max_length=1000, help_text="Optional, separated by commas (e.g. work, travel)."
    )

    def clean_text(self) -> str:
        text = str(self.cleaned_data["text"]).strip()
        if not text:
            raise forms.ValidationError("Write something to remember.")
        return text

    def clean_tags(self) -> list[str]:
        return [tag.strip() for tag in str(self.cleaned_data.get("tags") or "").split(",") if tag.strip()]
