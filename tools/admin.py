from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin
from django.forms.models import BaseInlineFormSet

from accounts.admin_helpers import CreatedByAdminMixin, count_column, json_field, with_count
from accounts.admin_scoping import OrgScopedAdminMixin, PublicIdSearchMixin
from tools.models import AgentTool, Tool

if TYPE_CHECKING:
    from django.http import HttpRequest


class AgentToolFormSet(BaseInlineFormSet):
    """Offers only rows of the parent's organization once the parent exists (agent's tools, tool's agents)."""

    def add_fields(self, form: forms.ModelForm, index: int | None) -> None:
        super().add_fields(form, index)
        organization_id = getattr(self.instance, "organization_id", None)
        if organization_id is None:
            return
        for name in ("agent", "tool"):
            field = form.fields.get(name)
            # The parent's own key is not a choice.
            if isinstance(field, forms.ModelChoiceField) and field.queryset is not None:
                field.queryset = field.queryset.filter(organization_id=organization_id)


class AgentToolForm(forms.ModelForm):
    class Meta:
        model = AgentTool
        fields = ("agent", "tool", "approval_policy", "approval_condition")
        widgets = {"approval_condition": forms.TextInput(attrs={"size": 30})}

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        agent = cleaned.get("agent") or getattr(self.instance, "agent", None)
        tool = cleaned.get("tool") or getattr(self.instance, "tool", None)
        if agent is not None and tool is not None and tool.organization_id != agent.organization_id:
            raise forms.ValidationError("An agent can only use tools of its own organization.")
        return cleaned


class BaseAgentToolInline(OrgScopedAdminMixin, admin.TabularInline):
    """Rows of ``AgentTool`` under an agent or a tool, limited to the parent's organization."""

    model = AgentTool
    form = AgentToolForm
    formset = AgentToolFormSet
    organization_path = "agent__organization"
    extra = 0


class ToolAgentInline(BaseAgentToolInline):
    """The agents that use this tool, with each agent's approval policy."""

    fields = ("agent", "approval_policy", "approval_condition")
    verbose_name = "agent using this tool"
    verbose_name_plural = "agents using this tool"


@admin.register(Tool)
class ToolAdmin(CreatedByAdminMixin, OrgScopedAdminMixin, PublicIdSearchMixin, admin.ModelAdmin):
    list_display = (
        "name",
        "public_id",
        "organization",
        "kind",
        "default_requires_approval",
        "agent_count",
        "updated_at",
    )
    list_filter = (
        "kind",
        "default_requires_approval",
        "tool_type",
        ("organization", admin.RelatedOnlyFieldListFilter),
    )
    search_fields = ("name", "description")
    list_select_related = ("organization",)
    readonly_fields = ("public_id", "schema", "created_by", "created_at", "updated_at")
    inlines = (ToolAgentInline,)
    fieldsets = (
        (None, {"fields": ("public_id", "organization", "name", "description", "kind", "tool_type")}),
        ("Behaviour", {"fields": ("default_requires_approval", "return_char_limit", "enable_parallel_execution")}),
        ("Source", {"fields": ("source_type", "source_code", "json_schema", "schema")}),
        ("Other", {"fields": ("tags", "metadata", "created_by", "created_at", "updated_at")}),
    )

    agent_count = count_column("agent_tools", "agents")
    schema = json_field("json_schema", "schema (formatted)")

    def get_queryset(self, request: HttpRequest) -> Any:
        return with_count(super().get_queryset(request), "agent_tools")
