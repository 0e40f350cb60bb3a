from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from accounts import services
from accounts.admin_scoping import OrgScopedAdminMixin, acting_membership
from accounts.models import ApiKey, Invite, Membership, Organization, Role, User

if TYPE_CHECKING:
    from django.db.models import QuerySet
    from django.http import HttpRequest


class MembershipInline(OrgScopedAdminMixin, admin.TabularInline):
    """Shown, not edited: roles change on the membership's own page, through the services' rules."""

    model = Membership
    extra = 0
    fields = ("user", "role", "created_at")
    readonly_fields = ("user", "role", "created_at")
    organization_path = "organization"
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Organization)
class OrganizationAdmin(OrgScopedAdminMixin, admin.ModelAdmin):
    organization_path = "pk"
    list_display = ("name", "slug", "public_id", "member_count", "created_at")
    search_fields = ("name", "slug")
    readonly_fields = ("public_id", "created_at")
    prepopulated_fields = {"slug": ("name",)}
    inlines = (MembershipInline,)
    date_hierarchy = "created_at"

    @admin.display(description="members")
    def member_count(self, obj: Organization) -> int:
        return obj.memberships.count()


class MembershipAdminForm(forms.ModelForm):
    class Meta:
        model = Membership
        fields = ("user", "organization", "role")

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        instance = self.instance
        if instance.pk and instance.role == Role.OWNER and cleaned.get("role") != Role.OWNER:
            others = Membership.objects.filter(organization_id=instance.organization_id, role=Role.OWNER)
            if not others.exclude(pk=instance.pk).exists():
                raise forms.ValidationError(
                    "An organization needs at least one owner; make someone else an owner first."
                )
        return cleaned


@admin.register(Membership)
class MembershipAdmin(OrgScopedAdminMixin, admin.ModelAdmin):
    """Role changes and removals go through ``accounts.services``: admins cannot grant or touch the
    owner role, and no organization loses its last owner."""

    form = MembershipAdminForm
    list_display = ("user", "organization", "role", "created_at")
    list_filter = ("role", ("organization", admin.RelatedOnlyFieldListFilter))
    search_fields = ("user__email", "user__name", "organization__name", "organization__slug")
    list_select_related = ("user", "organization")

    def save_model(self, request: HttpRequest, obj: Membership, form: forms.ModelForm, change: bool) -> None:
        self.check_in_scope(request, obj)
        actor = acting_membership(request, obj.organization_id)
        if actor is None:
            super().save_model(request, obj, form, change)
            return
        try:
            if change:
                services.membership_set_role(actor=actor, membership=obj, role=obj.role)
            else:
                services.require_may_grant(actor=actor, organization=obj.organization, role=obj.role)
                super().save_model(request, obj, form, change)
        except services.AccountsError as error:
            raise PermissionDenied(error.message) from error

    def delete_model(self, request: HttpRequest, obj: Membership) -> None:
        self._remove(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Membership]) -> None:
        for membership in queryset:
            self._remove(request, membership)

    def _remove(self, request: HttpRequest, membership: Membership) -> None:
        actor = acting_membership(request, membership.organization_id)
        try:
            if actor is None:
                services.membership_remove_as_operator(membership=membership)
            else:
                services.membership_remove(actor=actor, membership=membership)
        except services.AccountsError as error:
            raise PermissionDenied(error.message) from error


@admin.register(Invite)
class InviteAdmin(OrgScopedAdminMixin, admin.ModelAdmin):
    list_display = ("organization", "email", "role", "status", "created_by", "created_at", "accepted_by")
    list_filter = (
        "role",
        ("organization", admin.RelatedOnlyFieldListFilter),
        ("accepted_at", admin.EmptyFieldListFilter),
    )
    search_fields = ("email", "organization__name", "created_by__email", "accepted_by__email")
    list_select_related = ("organization", "created_by", "accepted_by")
    readonly_fields = ("token", "created_by", "created_at", "accepted_by", "accepted_at", "revoked_at")
    actions = ("revoke",)

    @admin.display(description="status")
    def status(self, obj: Invite) -> str:
        if obj.revoked_at:
            return "revoked"
        return "accepted" if obj.accepted_at else "pending"

    def save_model(self, request: HttpRequest, obj: Invite, form: forms.ModelForm, change: bool) -> None:
        if not change:
            obj.created_by = request.user  # type: ignore[assignment]  # the admin admits only logged-in staff
        self.check_in_scope(request, obj)
        actor = acting_membership(request, obj.organization_id)
        if actor is not None:
            try:
                services.require_may_grant(actor=actor, organization=obj.organization, role=obj.role)
            except services.AccountsError as error:
                raise PermissionDenied(error.message) from error
        super().save_model(request, obj, form, change)

    @admin.action(description="Revoke selected pending invites")
    def revoke(self, request: HttpRequest, queryset: QuerySet[Invite]) -> None:
        count = queryset.filter(accepted_at__isnull=True, revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} invite(s).", messages.SUCCESS)


@admin.register(ApiKey)
class ApiKeyAdmin(OrgScopedAdminMixin, admin.ModelAdmin):
    """Keys are created on the API keys page or by ``create_api_key``; the admin never sees a hash."""

    list_display = ("name", "prefix_display", "organization", "created_by", "created_at", "last_used_at", "active")
    list_filter = (("organization", admin.RelatedOnlyFieldListFilter), ("revoked_at", admin.EmptyFieldListFilter))
    search_fields = ("name", "prefix", "organization__name", "created_by__email")
    list_select_related = ("organization", "created_by")
    fields = ("name", "prefix", "organization", "created_by", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "organization", "created_by", "created_at", "last_used_at", "revoked_at")
    actions = ("revoke",)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    @admin.display(description="key")
    def prefix_display(self, obj: ApiKey) -> str:
        return f"{obj.prefix}…"

    @admin.display(description="active", boolean=True)
    def active(self, obj: ApiKey) -> bool:
        return obj.is_active

    @admin.action(description="Revoke selected keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        keys = list(queryset.filter(revoked_at__isnull=True))
        for api_key in keys:
            services.api_key_revoke(api_key=api_key)
        self.message_user(request, f"Revoked {len(keys)} key(s).", messages.SUCCESS)


def _normalized_email(form: forms.ModelForm) -> str:
    # Logins are looked up lower-cased (see LoginForm), so addresses are stored that way.
    return User.objects.normalize_email(form.cleaned_data["email"]).lower()


class UserAdminChangeForm(UserChangeForm):
    class Meta(UserChangeForm.Meta):
        model = User
        fields = "__all__"

    def clean_email(self) -> str:
        return _normalized_email(self)


class UserAdminCreationForm(AdminUserCreationForm):
    class Meta(AdminUserCreationForm.Meta):
        model = User
        fields = ("email", "name")
        field_classes: ClassVar[dict[str, type[forms.Field]]] = {}

    def clean_email(self) -> str:
        return _normalized_email(self)


@admin.register(User)
class UserAdmin(OrgScopedAdminMixin, DjangoUserAdmin):
    """Superusers manage logins; other staff only look up the people of their organizations."""

    organization_path = "memberships__organization"
    form = UserAdminChangeForm
    add_form = UserAdminCreationForm
    ordering = ("email",)
    list_display = ("email", "name", "is_staff", "is_active", "date_joined", "last_login")
    list_filter = ("is_staff", "is_superuser", "is_active")
    search_fields = ("email", "name")
    readonly_fields = ("date_joined", "last_login")
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        ("Profile", {"fields": ("name",)}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")}),
        ("Dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = (
        (None, {"classes": ("wide",), "fields": ("email", "name", "usable_password", "password1", "password2")}),
    )
    filter_horizontal = ("groups", "user_permissions")

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return request.user.is_superuser and super().has_add_permission(request, *args)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Editing logins (passwords, staff flags) would let staff take over each other's accounts.
        return request.user.is_superuser and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser and super().has_delete_permission(request, obj)
