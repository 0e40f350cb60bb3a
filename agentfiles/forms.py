"""The import page's form: the file (or, after a preview, the token of the file kept meanwhile) and options."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django import forms

from agents.llm.registry import model_choices

if TYPE_CHECKING:
    from accounts.models import Organization

KEEP_FILE_MODEL = ""


class AgentFileImportForm(forms.Form):
    file = forms.FileField(
        label="Agent file (.af)",
        required=False,
        widget=forms.ClearableFileInput(attrs={"accept": ".af,.json,application/json"}),
        help_text="Exported by Letta (any version) or by this server.",
    )
    token = forms.CharField(widget=forms.HiddenInput, required=False)
    model = forms.ChoiceField(
        label="Model",
        required=False,
        help_text="The model the imported agents use; keep the file's when this organization can use it.",
    )
    name = forms.CharField(label="Name", max_length=200, required=False, help_text="Empty: the file's name + _copy.")
    strip_messages = forms.BooleanField(label="Leave the conversation history out", required=False)

    def __init__(self, *args: Any, organization: Organization, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = cast("forms.ChoiceField", self.fields["model"])
        field.choices = [(KEEP_FILE_MODEL, "The file's model"), *model_choices(organization=organization)]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not data.get("file") and not data.get("token"):
            raise forms.ValidationError("Choose an agent file to import.")
        return data
