"""Forms of the tool pages: a tool is its Python source; the schema is derived from it."""

from __future__ import annotations

from typing import Any

from django import forms

from tools.schema import ToolSourceError, derive_tool_schema

SOURCE_PLACEHOLDER = '''def roll_dice(num_sides: int) -> str:
    """Roll a die and return the number that came up.

    Args:
        num_sides: How many sides the die has.
    """
    import random

    return str(random.randint(1, num_sides))
'''


def source_error_text(exc: ToolSourceError) -> str:
    return f"Line {exc.line}: {exc.message}" if exc.line else exc.message


class ToolForm(forms.Form):
    source_code = forms.CharField(
        label="Python source",
        strip=False,
        help_text=(
            "One public function. Its name is the tool's name, its Google-style docstring the description "
            "(and each argument's under Args:), its type hints the argument types."
        ),
        widget=forms.Textarea(
            attrs={
                "rows": 16,
                "spellcheck": "false",
                "autocapitalize": "off",
                "autocomplete": "off",
                "class": "code",
                "placeholder": SOURCE_PLACEHOLDER,
            }
        ),
    )
    description = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Leave empty to use the docstring's.",
    )
    default_requires_approval = forms.BooleanField(
        label="Ask a person before each call",
        required=False,
        help_text="Agents follow this unless their own settings say otherwise.",
    )

    def clean_source_code(self) -> str:
        source: str = self.cleaned_data["source_code"]
        try:
            self.schema: dict[str, Any] = derive_tool_schema(source)
        except ToolSourceError as exc:
            raise forms.ValidationError(source_error_text(exc), code="source") from exc
        return source


class ToolSearchForm(forms.Form):
    q = forms.CharField(label="Search tools", required=False, max_length=200)
