"""Request bodies (input serializers) and, for the OpenAPI schema, Letta's response shapes.

Responses are rendered by ``agents.wire.messages``; the output serializers here only
describe them. Every optional field accepts ``null`` because the SDK sends explicit
nulls (``upsert_from_function`` sends ``"args_json_schema": null``); unknown fields
are ignored, as on Letta.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from agents.api.memory_serializers import BlockCreateInput
from agents.engine.stop import StopReason
from agents.services import TOOL_RULE_TYPES

# The largest value the integer columns (``PositiveIntegerField``) hold on every database.
MAX_STORED_INT = 2**31 - 1

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


def _optional(field_class: type[Any], *args: Any, **kwargs: Any) -> Any:
    """An optional, nullable field (DRF rebuilds fields from their arguments, so set them there)."""
    return field_class(*args, required=False, allow_null=True, **kwargs)


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

    model = _optional(serializers.CharField)
    model_endpoint_type = _optional(serializers.CharField)
    provider_name = _optional(serializers.CharField)
    handle = _optional(serializers.CharField)
    context_window = _optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    temperature = _optional(serializers.FloatField, min_value=0.0, max_value=2.0)
    max_tokens = _optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    enable_reasoner = _optional(serializers.BooleanField)
    max_reasoning_tokens = _optional(serializers.IntegerField, min_value=0, max_value=MAX_STORED_INT)
    reasoning_effort = _optional(serializers.ChoiceField, choices=["minimal", "low", "medium", "high"])
    parallel_tool_calls = _optional(serializers.BooleanField)


class AgentCreateInput(serializers.Serializer):
    name = _optional(serializers.CharField, max_length=200)
    description = _optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    system = _optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    # Every agent here runs Letta's letta_v1_agent loop; the other types are accepted for compatibility.
    agent_type = _optional(serializers.ChoiceField, choices=LETTA_AGENT_TYPES)
    model = _optional(serializers.CharField, max_length=200)
    embedding = _optional(serializers.CharField, max_length=200)
    llm_config = _optional(LlmConfigInput)
    tools = _optional(serializers.ListField, child=serializers.CharField())
    tool_ids = _optional(serializers.ListField, child=serializers.CharField())
    tool_rules = _optional(serializers.ListField, child=ToolRuleInput())
    tags = _optional(serializers.ListField, child=serializers.CharField())
    metadata = _optional(serializers.DictField)
    include_base_tools = _optional(serializers.BooleanField, help_text="Attach Letta's default tools (default true).")
    memory_blocks = _optional(serializers.ListField, child=BlockCreateInput())
    block_ids = _optional(serializers.ListField, child=serializers.CharField())
    include_base_tool_rules = _optional(serializers.BooleanField)
    context_window_limit = _optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    max_tokens = _optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    max_reasoning_tokens = _optional(serializers.IntegerField, min_value=0, max_value=MAX_STORED_INT)
    enable_reasoner = _optional(serializers.BooleanField)
    reasoning = _optional(serializers.BooleanField)
    secrets = _optional(serializers.DictField, child=serializers.CharField(allow_blank=True))
    tool_exec_environment_variables = _optional(serializers.DictField, child=serializers.CharField(allow_blank=True))


class AgentUpdateInput(serializers.Serializer):
    name = _optional(serializers.CharField, max_length=200)
    description = _optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    system = _optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    model = _optional(serializers.CharField, max_length=200)
    embedding = _optional(serializers.CharField, max_length=200)
    llm_config = _optional(LlmConfigInput)
    tool_ids = _optional(serializers.ListField, child=serializers.CharField())
    tool_rules = _optional(serializers.ListField, child=ToolRuleInput())
    tags = _optional(serializers.ListField, child=serializers.CharField())
    metadata = _optional(serializers.DictField)
    reasoning = _optional(serializers.BooleanField)
    secrets = _optional(serializers.DictField, child=serializers.CharField(allow_blank=True))
    tool_exec_environment_variables = _optional(serializers.DictField, child=serializers.CharField(allow_blank=True))


class ToolCreateInput(serializers.Serializer):
    """``POST /v1/tools/`` and ``PUT /v1/tools/``: a Python source tool."""

    source_code = serializers.CharField(trim_whitespace=False)
    description = _optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    tags = _optional(serializers.ListField, child=serializers.CharField())
    source_type = _optional(serializers.CharField)
    json_schema = _optional(serializers.DictField)
    args_json_schema = _optional(serializers.DictField)
    return_char_limit = _optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    pip_requirements = _optional(serializers.ListField, child=serializers.DictField())
    npm_requirements = _optional(serializers.ListField, child=serializers.DictField())
    default_requires_approval = _optional(serializers.BooleanField)


class ToolUpdateInput(serializers.Serializer):
    description = _optional(serializers.CharField, allow_blank=True, trim_whitespace=False)
    tags = _optional(serializers.ListField, child=serializers.CharField())
    source_code = _optional(serializers.CharField, trim_whitespace=False)
    source_type = _optional(serializers.CharField)
    json_schema = _optional(serializers.DictField)
    args_json_schema = _optional(serializers.DictField)
    return_char_limit = _optional(serializers.IntegerField, min_value=1, max_value=MAX_STORED_INT)
    pip_requirements = _optional(serializers.ListField, child=serializers.DictField())
    npm_requirements = _optional(serializers.ListField, child=serializers.DictField())
    metadata_ = _optional(serializers.DictField)
    default_requires_approval = _optional(serializers.BooleanField)


# --- cancelling (turn requests are ``agents.engine.inputs.TurnRequest``) ---


class ToolApprovalInput(serializers.Serializer):
    requires_approval = _optional(serializers.BooleanField, help_text="Whether calls wait for a human (1.x).")


class ResetMessagesInput(serializers.Serializer):
    add_default_initial_messages = _optional(
        serializers.BooleanField, help_text="Add the default first messages back (false when omitted, as Letta)."
    )


class CancelAgentRunsInput(serializers.Serializer):
    run_ids = _optional(serializers.ListField, child=serializers.CharField(), help_text="Only these; all if absent.")


def present(data: dict[str, Any], *names: str) -> dict[str, Any]:
    """The fields of ``data`` among ``names`` that the client sent with a non-null value."""
    return {name: data[name] for name in names if data.get(name) is not None}


# --- response shapes (documentation only) --------------------------------------------------


class ErrorOutput(serializers.Serializer):
    detail = serializers.JSONField(help_text="A message, or an object for PENDING_APPROVAL conflicts.")


class ToolCallOutput(serializers.Serializer):
    name = serializers.CharField()
    arguments = serializers.CharField(allow_null=True)
    tool_call_id = serializers.CharField()


class ToolOutput(serializers.Serializer):
    id = serializers.CharField()
    tool_type = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    source_type = serializers.CharField()
    name = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    source_code = serializers.CharField(allow_null=True)
    json_schema = serializers.JSONField(allow_null=True)
    args_json_schema = serializers.JSONField(allow_null=True)
    return_char_limit = serializers.IntegerField()
    pip_requirements = serializers.JSONField(allow_null=True)
    npm_requirements = serializers.JSONField(allow_null=True)
    default_requires_approval = serializers.BooleanField(allow_null=True)
    enable_parallel_execution = serializers.BooleanField()
    created_by_id = serializers.CharField(allow_null=True)
    last_updated_by_id = serializers.CharField(allow_null=True)
    metadata_ = serializers.JSONField()


class LlmConfigOutput(serializers.Serializer):
    model = serializers.CharField()
    display_name = serializers.CharField(allow_null=True)
    model_endpoint_type = serializers.CharField()
    model_endpoint = serializers.CharField(allow_null=True)
    provider_name = serializers.CharField()
    provider_category = serializers.CharField()
    model_wrapper = serializers.CharField(allow_null=True)
    context_window = serializers.IntegerField()
    put_inner_thoughts_in_kwargs = serializers.BooleanField()
    handle = serializers.CharField()
    temperature = serializers.FloatField()
    max_tokens = serializers.IntegerField(allow_null=True)
    enable_reasoner = serializers.BooleanField()
    reasoning_effort = serializers.CharField(allow_null=True)
    max_reasoning_tokens = serializers.IntegerField()
    frequency_penalty = serializers.FloatField(allow_null=True)
    compatibility_type = serializers.CharField(allow_null=True)
    verbosity = serializers.CharField(allow_null=True)
    tier = serializers.CharField(allow_null=True)
    parallel_tool_calls = serializers.BooleanField()


class AgentStateOutput(serializers.Serializer):
    created_by_id = serializers.CharField(allow_null=True)
    last_updated_by_id = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    id = serializers.CharField()
    name = serializers.CharField()
    tool_rules = serializers.ListField(child=serializers.JSONField())
    message_ids = serializers.ListField(child=serializers.CharField())
    system = serializers.CharField()
    agent_type = serializers.CharField()
    llm_config = LlmConfigOutput()
    embedding_config = serializers.JSONField()
    response_format = serializers.JSONField(allow_null=True)
    description = serializers.CharField(allow_null=True)
    metadata = serializers.JSONField(allow_null=True)
    memory = serializers.JSONField()
    blocks = serializers.ListField(child=serializers.JSONField())
    tools = ToolOutput(many=True)
    sources = serializers.ListField(child=serializers.JSONField())
    tags = serializers.ListField(child=serializers.CharField())
    tool_exec_environment_variables = serializers.ListField(child=serializers.JSONField())
    secrets = serializers.ListField(child=serializers.JSONField())
    identity_ids = serializers.ListField(child=serializers.CharField())
    message_buffer_autoclear = serializers.BooleanField()
    timezone = serializers.CharField()
    max_files_open = serializers.IntegerField()
    per_file_view_window_char_limit = serializers.IntegerField()


class LettaMessageOutput(serializers.Serializer):
    """Any LettaMessage; ``message_type`` tells which of the type-specific fields are present."""

    id = serializers.CharField()
    date = serializers.DateTimeField()
    name = serializers.CharField(allow_null=True)
    message_type = serializers.ChoiceField(
        choices=[
            "system_message",
            "user_message",
            "reasoning_message",
            "hidden_reasoning_message",
            "assistant_message",
            "tool_call_message",
            "approval_request_message",
            "approval_response_message",
            "tool_return_message",
        ]
    )
    otid = serializers.CharField(allow_null=True)
    sender_id = serializers.CharField(allow_null=True)
    step_id = serializers.CharField(allow_null=True)
    is_err = serializers.BooleanField(allow_null=True)
    seq_id = serializers.IntegerField(allow_null=True)
    run_id = serializers.CharField(allow_null=True)
    content = serializers.JSONField(required=False)
    reasoning = serializers.CharField(required=False)
    signature = serializers.CharField(required=False, allow_null=True)
    source = serializers.CharField(required=False)  # type: ignore[assignment]  # a declared field, not Field's attribute (the metaclass collects it)
    state = serializers.CharField(required=False)
    hidden_reasoning = serializers.CharField(required=False, allow_null=True)
    tool_call = ToolCallOutput(required=False)
    tool_calls = ToolCallOutput(many=True, required=False)
    tool_return = serializers.CharField(required=False)
    status = serializers.CharField(required=False)
    tool_call_id = serializers.CharField(required=False)
    stdout = serializers.ListField(child=serializers.CharField(), required=False, allow_null=True)
    stderr = serializers.ListField(child=serializers.CharField(), required=False, allow_null=True)
    tool_returns = serializers.ListField(child=serializers.JSONField(), required=False)
    approvals = serializers.ListField(child=serializers.JSONField(), required=False)
    approve = serializers.BooleanField(required=False, allow_null=True)
    approval_request_id = serializers.CharField(required=False, allow_null=True)
    reason = serializers.CharField(required=False, allow_null=True)


class DeletedOutput(serializers.Serializer):
    message = serializers.CharField()


class HealthOutput(serializers.Serializer):
    version = serializers.CharField()
    status = serializers.CharField()


STOP_REASONS = [reason.value for reason in StopReason]


class StopReasonOutput(serializers.Serializer):
    message_type = serializers.ChoiceField(choices=["stop_reason"])
    stop_reason = serializers.ChoiceField(choices=STOP_REASONS)


class UsageStatisticsOutput(serializers.Serializer):
    message_type = serializers.ChoiceField(choices=["usage_statistics"], required=False)
    completion_tokens = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()
    step_count = serializers.IntegerField()
    run_ids = serializers.ListField(child=serializers.CharField(), allow_null=True)


class LettaResponseOutput(serializers.Serializer):
    messages = LettaMessageOutput(many=True)
    stop_reason = StopReasonOutput()
    usage = UsageStatisticsOutput()


class LettaStreamEventOutput(serializers.Serializer):
    """One server-sent event: ``data:`` is a JSON LettaMessage, ``stop_reason``, ``usage_statistics`` or
    ``ping`` object; the last event's data is ``[DONE]``. Comments (``: keep-alive``) may come between events."""

    data = serializers.CharField()  # type: ignore[assignment]  # a declared field, not Field's attribute (the metaclass collects it)


class RequestConfigOutput(serializers.Serializer):
    use_assistant_message = serializers.BooleanField()
    assistant_message_tool_name = serializers.CharField()
    assistant_message_tool_kwarg = serializers.CharField()
    include_return_message_types = serializers.ListField(child=serializers.CharField(), allow_null=True)


class RunOutput(serializers.Serializer):
    id = serializers.CharField()
    created_by_id = serializers.CharField(allow_null=True)
    last_updated_by_id = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField(allow_null=True)
    status = serializers.ChoiceField(choices=["created", "running", "completed", "failed", "cancelled"])
    completed_at = serializers.DateTimeField(allow_null=True)
    stop_reason = serializers.ChoiceField(choices=STOP_REASONS, allow_null=True)
    metadata = serializers.JSONField(allow_null=True)
    job_type = serializers.CharField()
    background = serializers.BooleanField()
    agent_id = serializers.CharField()
    callback_url = serializers.CharField(allow_null=True)
    callback_sent_at = serializers.DateTimeField(allow_null=True)
    callback_status_code = serializers.IntegerField(allow_null=True)
    callback_error = serializers.CharField(allow_null=True)
    ttft_ns = serializers.IntegerField(allow_null=True)
    total_duration_ns = serializers.IntegerField(allow_null=True)
    request_config = RequestConfigOutput()


class RunUsageOutput(serializers.Serializer):
    completion_tokens = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()
    step_count = serializers.IntegerField()


class StepOutput(serializers.Serializer):
    id = serializers.CharField()
    origin = serializers.CharField(allow_null=True)
    provider_id = serializers.CharField(allow_null=True)
    job_id = serializers.CharField(allow_null=True)
    run_id = serializers.CharField(allow_null=True)
    agent_id = serializers.CharField(allow_null=True)
    provider_name = serializers.CharField(allow_null=True)
    provider_category = serializers.CharField(allow_null=True)
    model = serializers.CharField(allow_null=True)
    model_endpoint = serializers.CharField(allow_null=True)
    context_window_limit = serializers.IntegerField(allow_null=True)
    completion_tokens = serializers.IntegerField(allow_null=True)
    prompt_tokens = serializers.IntegerField(allow_null=True)
    total_tokens = serializers.IntegerField(allow_null=True)
    completion_tokens_details = serializers.JSONField(allow_null=True)
    stop_reason = serializers.ChoiceField(choices=STOP_REASONS, allow_null=True)
    tags = serializers.ListField(child=serializers.CharField())
    tid = serializers.CharField(allow_null=True)
    trace_id = serializers.CharField(allow_null=True)
    messages = serializers.ListField(child=serializers.JSONField())
    feedback = serializers.CharField(allow_null=True)
    project_id = serializers.CharField(allow_null=True)
    error_type = serializers.CharField(allow_null=True)
    error_data = serializers.JSONField(allow_null=True)
    status = serializers.ChoiceField(choices=["pending", "success", "failed", "cancelled"])


class FunctionDefinitionOutput(serializers.Serializer):
    type = serializers.ChoiceField(choices=["function"])
    function = serializers.JSONField()


class ContextWindowOutput(serializers.Serializer):
    """Letta's ``ContextWindowOverview``; token counts are estimates (``token_counts_estimated``)."""

    context_window_size_max = serializers.IntegerField()
    context_window_size_current = serializers.IntegerField()
    num_messages = serializers.IntegerField()
    num_archival_memory = serializers.IntegerField()
    num_recall_memory = serializers.IntegerField()
    num_tokens_external_memory_summary = serializers.IntegerField()
    external_memory_summary = serializers.CharField(allow_blank=True)
    num_tokens_system = serializers.IntegerField()
    system_prompt = serializers.CharField(allow_blank=True)
    num_tokens_core_memory = serializers.IntegerField()
    core_memory = serializers.CharField(allow_blank=True)
    num_tokens_summary_memory = serializers.IntegerField()
    summary_memory = serializers.CharField(allow_null=True)
    num_tokens_functions_definitions = serializers.IntegerField()
    functions_definitions = FunctionDefinitionOutput(many=True)
    num_tokens_messages = serializers.IntegerField()
    messages = serializers.ListField(child=serializers.JSONField())
    token_counts_estimated = serializers.BooleanField()
