from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import password_validation
from django.contrib.auth.forms import AuthenticationForm

from accounts.models import Role, User


class LoginForm(AuthenticationForm):
    """Django's login form, labelled and hinted for an email login."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].label = "Email"
        self.fields["username"].widget = forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True})
        self.fields["password"].widget.attrs["autocomplete"] = "current-password"

    def clean_username(self) -> str:
        # Addresses are stored lower-cased; people type them however they like.
        return User.objects.normalize_email(self.cleaned_data["username"]).lower()


class SignupForm(forms.Form):
    email = forms.EmailField(widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True}))
    name = forms.CharField(max_length=150, widget=forms.TextInput(attrs={"autocomplete": "name"}))
    password = forms.CharField(
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text=password_validation.password_validators_help_text_html(),
    )
    organization_name = forms.CharField(
        label="Organization name", max_length=200, help_text="You will be its owner; you can invite others later."
    )

    def __init__(self, *args: Any, joining_by_invite: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if joining_by_invite:
            # They join the inviting organization; no need to create one.
            del self.fields["organization_name"]

    def clean_email(self) -> str:
        # Whether the address has an account is never said here (accounts/signup.py).
        return User.objects.normalize_email(self.cleaned_data["email"]).lower()

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        password = cleaned.get("password")
        if password:
            candidate = User(email=cleaned.get("email", ""), name=cleaned.get("name", ""))
            try:
                password_validation.validate_password(password, candidate)
            except forms.ValidationError as error:
                self.add_error("password", error)
        return cleaned


class OrganizationForm(forms.Form):
    name = forms.CharField(label="Organization name", max_length=200)


def _role_choices(*, actor_role: str) -> list[tuple[str, str]]:
    """Admins cannot hand out the owner role."""
    return [(value, label) for value, label in Role.choices if actor_role == Role.OWNER or value != Role.OWNER]


class InviteForm(forms.Form):
    email = forms.EmailField(
        required=False, help_text="Optional: who the link is for, so you recognise it in the list."
    )
    role = forms.ChoiceField(choices=Role.choices, initial=Role.MEMBER)

    def __init__(self, *args: Any, actor_role: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = _role_choices(actor_role=actor_role)  # type: ignore[attr-defined]  # a ChoiceField


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)

    def __init__(self, *args: Any, actor_role: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = _role_choices(actor_role=actor_role)  # type: ignore[attr-defined]  # a ChoiceField


class ApiKeyForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What uses this key, e.g. “billing bot” or “laptop”.")
