from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from accounts.admin_helpers import CreatedByAdminMixin, count_column, json_field, with_count
from accounts.admin_scoping import OrgScopedAdminMixin, PublicIdSearchMixin, ReadOnlyAdminMixin
from agents.models import (
    Agent,
    AgentBlock,
    ApprovalDecision,
    Block,
    Message,
    MessageRole,
    Passage,
    Run,
    RunTransport,
    Step,
)
from tools.admin import BaseAgentToolInline
from tools.models import AgentTool

if TYPE_CHECKING:
    from django.http import HttpRequest


class AgentToolInline(BaseAgentToolInline):
    fields = ("tool", "approval_policy", "approval_condition", "effective")
    readonly_fields = ("effective",)
    verbose_name = "tool"
    verbose_name_plural = "tools"

    @admin.display(description="in effect")
    def effective(self, obj: AgentTool) -> str:
        return obj.effective_policy if obj.pk else "-"


@admin.register(Agent)
class AgentAdmin(CreatedByAdminMixin, OrgScopedAdminMixin, PublicIdSearchMixin, admin.ModelAdmin):
    list_display = ("name", "public_id", "organization", "model", "tool_count", "messages_link", "created_at")
    list_filter = (
        ("organization", admin.RelatedOnlyFieldListFilter),
        "model",
        "enable_reasoner",
        "parallel_tool_calls",
    )
    search_fields = ("name", "description", "model")
    list_select_related = ("organization",)
    readonly_fields = (
        "public_id",
        "messages_link",
        "created_by",
        "created_at",
        "updated_at",
        "context_start_seq",
        "tool_env_vars_masked",
    )
    inlines = (AgentToolInline,)
    date_hierarchy = "created_at"
    fieldsets = (
        (None, {"fields": ("public_id", "organization", "name", "description", "messages_link")}),
        ("Model", {"fields": ("model", "embedding", "system", "temperature", "max_tokens", "context_window")}),
        (
            "Behaviour",
            {
                "fields": (
                    "max_steps",
                    "parallel_tool_calls",
                    "enable_reasoner",
                    "max_reasoning_tokens",
                    "reasoning_effort",
                    "tool_rules",
                    "tool_env_vars_masked",
                )
            },
        ),
        ("Other", {"fields": ("tags", "metadata", "context_start_seq", "created_by", "created_at", "updated_at")}),
    )

    tool_count = count_column("agent_tools", "tools")

    def get_queryset(self, request: HttpRequest) -> Any:
        return with_count(super().get_queryset(request), "agent_tools")

    @admin.display(description="tool variables")
    def tool_env_vars_masked(self, obj: Agent) -> str:
        """Names only: the values are secrets (set through the API's ``tool_exec_environment_variables``)."""
        names = sorted(obj.tool_env_vars or {})
        return ", ".join(f"{name}=••••" for name in names) or "—"

    @admin.display(description="messages")
    def messages_link(self, obj: Agent) -> str:
        if obj._state.adding:
            return "—"
        url = reverse("admin:agents_message_changelist") + f"?agent__id__exact={obj.pk}"
        return format_html('<a href="{}">Messages</a>', url)


@admin.register(Message)
class MessageAdmin(OrgScopedAdminMixin, PublicIdSearchMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("public_id", "agent", "seq", "role", "preview", "is_err", "run", "created_at")
    list_filter = ("role", "is_err", ("organization", admin.RelatedOnlyFieldListFilter))
    search_fields = ("otid", "name", "agent__name")
    list_select_related = ("agent", "run")
    ordering = ("agent", "-seq")
    fields = (
        "public_id",
        "organization",
        "agent",
        "seq",
        "role",
        "name",
        "otid",
        "run",
        "step",
        "is_err",
        "sender_user",
        "sender_api_key",
        "created_at",
        "content_json",
        "tool_calls_json",
        "tool_returns_json",
        "approvals_json",
    )
    readonly_fields = fields
    content_json = json_field("content", "content")
    tool_calls_json = json_field("tool_calls", "tool calls")
    tool_returns_json = json_field("tool_returns", "tool returns")
    approvals_json = json_field("approvals", "approvals")

    @admin.display(description="text")
    def preview(self, obj: Message) -> str:
        texts = [part.get("text", "") for part in obj.content if isinstance(part, dict) and part.get("type") == "text"]
        text = " ".join(texts) or ", ".join(call.get("name", "") for call in obj.tool_calls if isinstance(call, dict))
        return text[:80] + ("…" if len(text) > 80 else "")


def _decision_line(item: dict[str, Any]) -> str:
    if item.get("type") == "tool":
        return f"result given for {item.get('tool_call_id')}"
    verb = "approved" if item.get("approve") else "denied"
    line = f"{verb} {item.get('tool_call_id')}"
    if item.get("arguments") is not None:
        line += ", arguments edited"
    if item.get("always_allow"):
        line += ", always allow"
    if item.get("reason"):
        line += f": {item['reason']}"
    return line


class TransportFilter(admin.SimpleListFilter):
    """How the decisions arrived: the transport of the run that carried them."""

    title = "transport"
    parameter_name = "transport"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(str(value), str(label)) for value, label in RunTransport.choices]

    def queryset(self, request: HttpRequest, queryset: Any) -> Any:
        return queryset.filter(run__transport=self.value()) if self.value() else queryset


class DecidedByFilter(admin.SimpleListFilter):
    title = "decided by"
    parameter_name = "decided_by"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("person", "A person"), ("api_key", "An API key"), ("expiry", "Approval expiry")]

    def queryset(self, request: HttpRequest, queryset: Any) -> Any:
        if self.value() == "person":
            return queryset.filter(sender_user__isnull=False, sender_api_key__isnull=True)
        if self.value() == "api_key":
            return queryset.filter(sender_api_key__isnull=False)
        if self.value() == "expiry":
            return queryset.filter(run__transport=RunTransport.EXPIRY)
        return queryset


@admin.register(ApprovalDecision)
class ApprovalDecisionAdmin(OrgScopedAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    """Who decided what, when and how: every approval answer, read-only (DESIGN §13's audit)."""

    list_display = ("created_at", "agent", "decided_by", "transport", "decisions")
    list_filter = (
        TransportFilter,
        DecidedByFilter,
        ("organization", admin.RelatedOnlyFieldListFilter),
        ("agent", admin.RelatedOnlyFieldListFilter),
    )
    search_fields = ("agent__name", "sender_user__email", "sender_api_key__name")
    list_select_related = ("agent", "run")
    date_hierarchy = "created_at"
    ordering = ("-created_at",)
    fields = ("agent", "seq", "run", "created_at", "decided_by", "transport", "decisions", "approvals_json")
    readonly_fields = fields
    approvals_json = json_field("approvals", "stored decisions")

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).filter(role=MessageRole.APPROVAL)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @staticmethod
    def _first(obj: ApprovalDecision) -> dict[str, Any]:
        return next((item for item in obj.approvals if isinstance(item, dict)), {})

    @admin.display(description="decided by")
    def decided_by(self, obj: ApprovalDecision) -> str:
        return str(self._first(obj).get("decided_by") or "-")

    @admin.display(description="transport", ordering="run__transport")
    def transport(self, obj: ApprovalDecision) -> str:
        return str(self._first(obj).get("transport") or (obj.run.transport if obj.run else "-"))

    @admin.display(description="decisions")
    def decisions(self, obj: ApprovalDecision) -> str:
        return "; ".join(_decision_line(item) for item in obj.approvals if isinstance(item, dict))


class StepInline(OrgScopedAdminMixin, ReadOnlyAdminMixin, admin.TabularInline):
    model = Step
    extra = 0
    can_delete = False
    show_change_link = True
    fields = ("number", "model", "status", "stop_reason", "total_tokens", "usage_estimated", "llm_ms", "tool_ms")
    readonly_fields = fields


@admin.register(Run)
class RunAdmin(OrgScopedAdminMixin, PublicIdSearchMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = (
        "public_id",
        "agent",
        "status",
        "stop_reason",
        "background",
        "step_count",
        "total_tokens",
        "duration",
        "created_at",
    )
    list_filter = ("status", "stop_reason", "background", ("organization", admin.RelatedOnlyFieldListFilter))
    search_fields = ("agent__name",)
    list_select_related = ("agent",)
    date_hierarchy = "created_at"
    inlines = (StepInline,)
    fields = (
        "public_id",
        "organization",
        "agent",
        "status",
        "stop_reason",
        "background",
        "step_count",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "created_by",
        "api_key",
        "created_at",
        "started_at",
        "completed_at",
        "heartbeat_at",
        "cancel_requested_at",
        "request_json",
        "error_json",
    )
    readonly_fields = fields
    request_json = json_field("request", "request")
    error_json = json_field("error", "error")

    @admin.display(description="duration")
    def duration(self, obj: Run) -> str:
        return "—" if obj.duration_ms is None else f"{obj.duration_ms} ms"


@admin.register(Step)
class StepAdmin(OrgScopedAdminMixin, PublicIdSearchMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("public_id", "run", "number", "model", "status", "stop_reason", "total_tokens", "llm_ms", "tool_ms")
    list_filter = ("status", "stop_reason", "usage_estimated", ("organization", admin.RelatedOnlyFieldListFilter))
    search_fields = ("model", "agent__name")
    list_select_related = ("run",)
    fields = (
        "public_id",
        "organization",
        "agent",
        "run",
        "number",
        "model",
        "status",
        "stop_reason",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "reasoning_tokens",
        "cached_tokens",
        "usage_estimated",
        "llm_ms",
        "tool_ms",
        "created_at",
        "completed_at",
        "error_json",
    )
    readonly_fields = fields
    error_json = json_field("error", "error")


# --- memory: blocks and archival passages -------------------------------------------------


class BlockAgentInline(OrgScopedAdminMixin, admin.TabularInline):
    model = AgentBlock
    organization_path = "block__organization"
    extra = 0
    fields = ("agent", "position")
    verbose_name = "agent using this block"
    verbose_name_plural = "agents using this block"


@admin.register(Block)
class BlockAdmin(OrgScopedAdminMixin, PublicIdSearchMixin, admin.ModelAdmin):
    list_display = ("label", "public_id", "organization", "chars", "limit", "read_only", "agent_count", "updated_at")
    list_filter = (("organization", admin.RelatedOnlyFieldListFilter), "read_only", "label")
    search_fields = ("label", "value", "description")
    list_select_related = ("organization",)
    readonly_fields = ("public_id", "created_at", "updated_at")
    fields = (
        "public_id",
        "organization",
        "label",
        "description",
        "value",
        "limit",
        "read_only",
        "tags",
        "metadata",
        "created_at",
        "updated_at",
    )
    inlines = (BlockAgentInline,)
    agent_count = count_column("agent_blocks", "agents")

    def get_queryset(self, request: HttpRequest) -> Any:
        return with_count(super().get_queryset(request), "agent_blocks")

    @admin.display(description="characters")
    def chars(self, obj: Block) -> int:
        return len(obj.value)


@admin.register(Passage)
class PassageAdmin(OrgScopedAdminMixin, PublicIdSearchMixin, admin.ModelAdmin):
    list_display = ("short_text", "public_id", "organization", "agent", "created_at")
    list_filter = (("organization", admin.RelatedOnlyFieldListFilter),)
    search_fields = ("text",)
    list_select_related = ("organization", "agent")
    readonly_fields = ("public_id", "embedding_model", "created_at", "updated_at")
    fields = ("public_id", "organization", "agent", "text", "tags", "metadata", "embedding_model", "created_at")
    date_hierarchy = "created_at"

    @admin.display(description="text")
    def short_text(self, obj: Passage) -> str:
        return obj.text[:80]
