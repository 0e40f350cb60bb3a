"""Request bodies: the input serializers that parse them.

Answers are typed where they are built (``agents.wire``) and documented from those types
(``agents.api.openapi``). Every optional field accepts ``null`` because the SDK sends explicit
nulls (``upsert_from_function`` sends ``"args_json_schema": null``); unknown fields
are ignored, as on Letta.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from agents.api.fields import MAX_STORED_INT, Stricter, optional
from agents.api.memory_serializers import BlockCreateInput
from agents.llm.agent_settings import COMPACTION_MODES, MODEL_SETTINGS_PROVIDER_TYPES, REASONING_EFFORTS
from agents.services import TOOL_RULE_TYPES

LETTA_AGENT_TYPES = [
    "letta_v1_agent",
    "memgpt_agent",
    "memgpt_v2_agent",
    "react_agent",
    "workflow_agent",
    "split_thread_agent",
    "sleeptime_agent",
    "voice_convo_agent",
    "voice_sleeptime_agent",
]


class ToolRuleInput(serializers.Serializer):
    tool_name = serializers.CharField()
    type = serializers.ChoiceField(choices=sorted(TOOL_RULE_TYPES))
    prompt_template = serializers.CharField(required=False, allow_null=True, allow_blank=True)
    children = serializers.ListField(child=serializers.CharField(), required=False)
    max_count_limit = serializers.IntegerField(required=False, min_value=1, max_value=MAX_STORED_INT)
    default_child = serializers.CharField(required=False, allow_null=True)
    child_output_mapping = serializers.DictField(child=serializers.CharField(), required=False)
    require_output_mapping = serializers.BooleanField(required=False)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        validated = super().to_internal_value(data)
        if validated["type"] in ("constrain_child_tools", "parent_last_tool") and "children" not in validated:
            raise serializers.ValidationError({"children": ["This field is required."]})
        if validated["type"] == "max_count_per_step" and "max_count_limit" not in validated:
            raise serializers.ValidationError({"max_count_limit": ["This field is required."]})
        if validated["type"] == "conditional" and "child_output_mapping" not in validated:
            raise serializers.ValidationError({"child_output_mapping": ["This field is required."]})
        return dict(validated)


class LlmConfigInput(serializers.Serializer):
    """The parts of Letta's ``LlmConfig`` we act on; the other keys are accepted and ignored."""

    model = optional(serializers.CharField)
    model_endpoint_type = optional(serializers.CharField)
    provider_name = optional(serializers.CharField)
    handle = optional(serializers.CharField)
    context_window = optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    temperature = optional(serializers.FloatField, min_value=0.0, max_value=2.0)
    max_tokens = optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    enable_reasoner = optional(serializers.BooleanField)
    max_reasoning_tokens = optional(serializers.IntegerField, min_value=0, max_value=MAX_STORED_INT)
    reasoning_effort = optional(serializers.ChoiceField, choices=["minimal", "low", "medium", "high"])
    parallel_tool_calls = optional(serializers.BooleanField)


class ThinkingInput(serializers.Serializer):
    # A regex, not a choice: another ``type`` enum in the schema would collide with its name.
    type = optional(serializers.RegexField, r"^(enabled|disabled)$")
    budget_tokens = optional(serializers.IntegerField, min_value=0, max_value=MAX_STORED_INT)


class ReasoningInput(serializers.Serializer):
    reasoning_effort = optional(serializers.ChoiceField, choices=list(REASONING_EFFORTS))


class ModelSettingsInput(serializers.Serializer):
    """Letta's ``model_settings`` (one object per ``provider_type``; the fields we act on, the others ignored)."""

    provider_type = serializers.ChoiceField(choices=list(MODEL_SETTINGS_PROVIDER_TYPES))
    max_output_tokens = optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    parallel_tool_calls = optional(serializers.BooleanField)
    temperature = optional(serializers.FloatField, min_value=0.0, max_value=2.0)
    thinking = optional(ThinkingInput)
    reasoning = optional(ReasoningInput)
    effort = optional(serializers.ChoiceField, choices=["low", "medium", "high", "max"])

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        """Without the fields left out or null: each applies its default (``services.model_settings_fields``)."""
        return {k: v for k, v in super().to_internal_value(data).items() if v is not None}


class CompactionSettingsInput(serializers.Serializer):
    """Letta's ``compaction_settings``; a PATCH merges the fields given into the stored ones."""

    model = optional(serializers.CharField, max_length=200)
    model_settings = optional(serializers.DictField)
    prompt = optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    prompt_acknowledgement = optional(serializers.BooleanField)
    clip_chars = optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    mode = optional(serializers.ChoiceField, choices=list(COMPACTION_MODES))
    sliding_window_percentage = optional(serializers.FloatField, min_value=0.0, max_value=1.0)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        return dict(super().to_internal_value(data))


class InitialMessageInput(serializers.Serializer):
    """An item of ``initial_message_sequence`` (Letta's ``MessageCreate``): a string or text parts."""

    role = serializers.ChoiceField(choices=["user", "system", "assistant"])
    content = serializers.JSONField()

    def validate_content(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(
            isinstance(p, dict) and p.get("type", "text") == "text" and isinstance(p.get("text"), str) for p in value
        ):
            return "\n".join(p["text"] for p in value)
        raise serializers.ValidationError("Expected a string or a list of text parts.")


class AgentUpdateInput(serializers.Serializer):
    name = optional(serializers.CharField, max_length=200)
    description = optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    system = optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    model = optional(serializers.CharField, max_length=200)
    embedding = optional(serializers.CharField, max_length=200)
    llm_config = optional(LlmConfigInput)
    tool_ids = optional(serializers.ListField, child=serializers.CharField())
    tool_rules = optional(serializers.ListField, child=ToolRuleInput())
    tags = optional(serializers.ListField, child=serializers.CharField())
    metadata = optional(serializers.DictField)
    reasoning = optional(serializers.BooleanField)
    secrets = optional(serializers.DictField, child=serializers.CharField(allow_blank=True))
    tool_exec_environment_variables = optional(serializers.DictField, child=serializers.CharField(allow_blank=True))
    model_settings = optional(ModelSettingsInput)
    compaction_settings = optional(CompactionSettingsInput)
    parallel_tool_calls = optional(serializers.BooleanField)
    context_window_limit = optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    max_tokens = optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)


class AgentCreateInput(AgentUpdateInput):
    """What an update takes, and what only a new agent is given."""

    # Every agent here runs Letta's letta_v1_agent loop; the other types are accepted for compatibility.
    agent_type = optional(serializers.ChoiceField, choices=LETTA_AGENT_TYPES)
    tools = optional(serializers.ListField, child=serializers.CharField())
    include_base_tools = optional(serializers.BooleanField, help_text="Attach Letta's default tools (default true).")
    memory_blocks = optional(serializers.ListField, child=BlockCreateInput())
    block_ids = optional(serializers.ListField, child=serializers.CharField())
    include_base_tool_rules = optional(serializers.BooleanField)
    max_reasoning_tokens = optional(serializers.IntegerField, min_value=0, max_value=MAX_STORED_INT)
    enable_reasoner = optional(serializers.BooleanField)
    initial_message_sequence = optional(serializers.ListField, child=InitialMessageInput())


class ToolUpdateInput(serializers.Serializer):
    description = optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    tags = optional(serializers.ListField, child=serializers.CharField())
    source_code = optional(serializers.CharField, trim_whitespace=False)
    source_type = optional(serializers.CharField)
    json_schema = optional(serializers.DictField)
    args_json_schema = optional(serializers.DictField)
    return_char_limit = optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    pip_requirements = optional(serializers.ListField, child=serializers.DictField())
    npm_requirements = optional(serializers.ListField, child=serializers.DictField())
    metadata_ = optional(serializers.DictField)
    default_requires_approval = optional(serializers.BooleanField)


class ToolCreateInput(Stricter, ToolUpdateInput):
    """``POST /v1/tools/`` and ``PUT /v1/tools/``: a Python source tool."""

    needs = ("source_code",)
    leaves_out = ("metadata_",)


# --- cancelling (turn requests are ``agents.engine.inputs.TurnRequest``) ---


class ToolApprovalInput(serializers.Serializer):
    requires_approval = optional(serializers.BooleanField, help_text="Whether calls wait for a human (1.x).")


class ResetMessagesInput(serializers.Serializer):
    add_default_initial_messages = optional(
        serializers.BooleanField, help_text="Add the default first messages back (false when omitted, as Letta)."
    )


class CancelAgentRunsInput(serializers.Serializer):
    run_ids = optional(serializers.ListField, child=serializers.CharField(), help_text="Only these; all if absent.")


def present(data: dict[str, Any], *names: str) -> dict[str, Any]:
    """The fields of ``data`` among ``names`` that the client sent with a non-null value."""
    return {name: data[name] for name in names if data.get(name) is not None}
