"""The providers page's form: a new provider of the organization (the key is write-only)."""

from __future__ import annotations

from django import forms

from providers.types import ProviderType


class ProviderForm(forms.Form):
    name = forms.CharField(
        max_length=100,
        widget=forms.TextInput(attrs={"autocomplete": "off", "placeholder": "e.g. office-ollama"}),
        help_text="Its models' handles start with it: name/model. No spaces or slashes.",
    )
    provider_type = forms.ChoiceField(label="Type", choices=ProviderType.choices)
    base_url = forms.CharField(
        label="Base URL",
        required=False,
        max_length=500,
        widget=forms.TextInput(
            attrs={"placeholder": "e.g. http://ollama.internal:11434", "inputmode": "url", "autocomplete": "off"}
        ),
        help_text="Needed for Ollama, vLLM, LM Studio, Azure and any other OpenAI-compatible server.",
    )
    api_key = forms.CharField(
        label="API key",
        required=False,
        max_length=4000,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Stored encrypted and never shown again. Local servers need none.",
    )
    api_version = forms.CharField(
        label="API version", required=False, max_length=40, help_text="Azure OpenAI only (e.g. 2024-10-21)."
    )
