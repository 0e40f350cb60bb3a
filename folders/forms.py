"""The forms of the Folders pages."""

from __future__ import annotations

from django import forms


class FolderForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    instructions = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="What agents should do with these files (shown with them in the agent's prompt).",
    )


class UploadForm(forms.Form):
    file = forms.FileField(
        help_text="PDF, DOCX, PPTX, XLSX, HTML, Markdown, text, CSV, JSON or code (not the old .xls: save it as XLSX).",
    )
