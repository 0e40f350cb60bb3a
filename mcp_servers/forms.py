"""The MCP servers page's forms: a new server (its token and headers are write-only), and attaching a tool."""

from __future__ import annotations

from django import forms

from mcp_servers.models import ServerType


class MCPServerForm(forms.Form):
    server_name = forms.CharField(
        label="Name",
        max_length=200,
        widget=forms.TextInput(attrs={"autocomplete": "off", "placeholder": "e.g. github"}),
        help_text="Its tools are tagged mcp:name.",
    )
    server_url = forms.CharField(
        label="URL",
        max_length=2000,
        widget=forms.TextInput(attrs={"placeholder": "https://mcp.example.com/mcp", "inputmode": "url"}),
    )
    server_type = forms.ChoiceField(
        label="Transport", choices=[(ServerType.STREAMABLE_HTTP, "Streamable HTTP"), (ServerType.SSE, "SSE")]
    )
    token = forms.CharField(
        label="Bearer token",
        required=False,
        max_length=4000,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Sent as Authorization: Bearer …, unless headers are given. Stored encrypted, never shown again.",
    )
    headers = forms.CharField(
        label="Headers",
        required=False,
        max_length=8000,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "X-Api-Key: {{ API_KEY }}"}),
        help_text="One Name: value a line; {{ VAR }} comes from the calling agent's tool variables.",
    )

    def clean_headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        for number, line in enumerate(self.cleaned_data.get("headers", "").splitlines(), start=1):
            if not line.strip():
                continue
            name, colon, value = line.partition(":")
            if not colon or not name.strip():
                raise forms.ValidationError(f"Line {number} is not Name: value.")
            headers[name.strip()] = value.strip()
        return headers


class AttachToolForm(forms.Form):
    agent_id = forms.CharField(max_length=100)
    tool_id = forms.CharField(max_length=100)
