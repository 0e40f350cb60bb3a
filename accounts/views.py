"""Account pages. Each view parses a form, calls one service and renders or redirects.

The current organization and membership come from ``request.organization`` and
``request.membership`` (set once by ``CurrentOrganizationMiddleware``). Rows of
another organization are looked up through ``for_org`` and are a 404.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts import services
from accounts.access import SESSION_ORGANIZATION_KEY
from accounts.decorators import manager_required, membership_required
from accounts.forms import ApiKeyForm, InviteForm, LoginForm, OrganizationForm, RoleForm, SignupForm
from accounts.mail import MailNotSent
from accounts.models import ApiKey, Invite, Membership, Organization
from accounts.signup import SignupLinkInvalid, signup_allowed, signup_request
from accounts.signup import signup_confirm as signup_confirm_link

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

    from accounts.http import AuthenticatedHttpRequest, OrganizationHttpRequest


class LoginView(auth_views.LoginView):
    template_name = "accounts/login.html"
    form_class = LoginForm
    redirect_authenticated_user = True


def _select_organization(request: HttpRequest, organization_id: Any) -> None:
    request.session[SESSION_ORGANIZATION_KEY] = str(organization_id)


def _pending_invite(token: str | None) -> Invite | None:
    if not token:
        return None
    return Invite.objects.pending().select_related("organization").filter(token=token).first()


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """One answer for every address: "check your email" (accounts/signup.py says why)."""
    invite = _pending_invite(request.GET.get("invite") or request.POST.get("invite"))
    if request.user.is_authenticated:
        return redirect("accounts:invite_accept", token=invite.token) if invite else redirect("agents:list")
    if not signup_allowed(invited=invite is not None):
        return render(request, "accounts/signup_closed.html", status=403)
    form = SignupForm(request.POST or None, joining_by_invite=invite is not None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            signup_request(
                email=data["email"],
                name=data["name"],
                password=data["password"],
                organization_name=data.get("organization_name", ""),
                invite_token=invite.token if invite else "",
                absolute_url=request.build_absolute_uri,
            )
        except MailNotSent as error:
            form.add_error(None, error.message)
            return render(request, "accounts/signup.html", {"form": form, "invite": invite}, status=503)
        return render(request, "accounts/signup_sent.html", {"email": data["email"]})
    return render(request, "accounts/signup.html", {"form": form, "invite": invite})


@require_http_methods(["GET", "POST"])
def signup_confirm(request: HttpRequest, token: str) -> HttpResponse:
    """GET asks to confirm (mail scanners fetch links); POST creates the account and logs in."""
    if request.method == "GET":
        return render(request, "accounts/signup_confirm.html", {"token": token})
    try:
        confirmed = signup_confirm_link(token)
    except SignupLinkInvalid as error:
        return render(request, "accounts/signup_invalid.html", {"message": error.message}, status=410)
    user = confirmed.user
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    if confirmed.invite_token:
        return redirect("accounts:invite_accept", token=confirmed.invite_token)
    organization = user.organizations().get()
    _select_organization(request, organization.pk)
    messages.success(request, f"Welcome! You are the owner of {organization}.")
    return redirect("agents:list")


@login_required
@require_http_methods(["GET", "POST"])
def organization_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = OrganizationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        organization = services.organization_create_with_owner(name=form.cleaned_data["name"], owner=request.user)
        _select_organization(request, organization.pk)
        messages.success(request, f"Created {organization}; you are its owner.")
        return redirect("agents:list")
    return render(request, "accounts/organization_create.html", {"form": form})


@login_required
@require_POST
def organization_switch(request: AuthenticatedHttpRequest) -> HttpResponse:
    organization_id = Organization.parse_public_id(request.POST.get("organization", ""))
    if organization_id is None:
        raise Http404("Organization not found")
    membership = get_object_or_404(
        Membership.objects.select_related("organization"), user=request.user, organization_id=organization_id
    )
    _select_organization(request, membership.organization_id)
    messages.success(request, f"Switched to {membership.organization}.")
    return redirect("agents:list")


@membership_required
def member_list(request: OrganizationHttpRequest) -> HttpResponse:
    actor = request.membership
    memberships = Membership.objects.for_org(request.organization).select_related("user").order_by("user__email")
    rows = [
        {
            "membership": membership,
            "manageable": membership.pk != actor.pk and services.may_manage_member(actor=actor, membership=membership),
            "role_form": RoleForm(initial={"role": membership.role}, actor_role=actor.role),
        }
        for membership in memberships
    ]
    return render(request, "accounts/members.html", {"rows": rows, "actor": actor})


@manager_required
@require_POST
def member_role(request: OrganizationHttpRequest, pk: int) -> HttpResponse:
    actor = request.membership
    membership = get_object_or_404(Membership.objects.for_org(request.organization).select_related("user"), pk=pk)
    form = RoleForm(request.POST, actor_role=actor.role)
    if not form.is_valid():
        messages.error(request, "Choose a role you are allowed to grant.")
        return redirect("accounts:members")
    try:
        services.membership_set_role(actor=actor, membership=membership, role=form.cleaned_data["role"])
    except services.AccountsError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"{membership.user} is now {membership.get_role_display().lower()}.")
    return redirect("accounts:members")


@membership_required
@require_POST
def member_remove(request: OrganizationHttpRequest, pk: int) -> HttpResponse:
    actor = request.membership
    membership = get_object_or_404(Membership.objects.for_org(request.organization).select_related("user"), pk=pk)
    try:
        services.membership_remove(actor=actor, membership=membership)
    except services.AccountsError as error:
        messages.error(request, error.message)
        return redirect("accounts:members")
    if membership.pk == actor.pk:
        request.session.pop(SESSION_ORGANIZATION_KEY, None)
        messages.success(request, f"You left {actor.organization}.")
        return redirect("agents:list")
    messages.success(request, f"Removed {membership.user} from {actor.organization}.")
    return redirect("accounts:members")


@manager_required
@require_http_methods(["GET", "POST"])
def invite_list(request: OrganizationHttpRequest) -> HttpResponse:
    actor = request.membership
    form = InviteForm(request.POST or None, actor_role=actor.role)
    if request.method == "POST" and form.is_valid():
        try:
            invite = services.invite_create(
                actor=actor, email=form.cleaned_data["email"], role=form.cleaned_data["role"]
            )
        except services.AccountsError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, f"Invite created. Send this link: {_invite_url(request, invite)}")
            return redirect("accounts:invites")
    invites = (
        Invite.objects.for_org(request.organization).pending().select_related("created_by").order_by("-created_at")
    )
    rows = [{"invite": invite, "url": _invite_url(request, invite)} for invite in invites]
    return render(request, "accounts/invites.html", {"form": form, "rows": rows})


def _invite_url(request: HttpRequest, invite: Invite) -> str:
    return request.build_absolute_uri(reverse("accounts:invite_accept", kwargs={"token": invite.token}))


@manager_required
@require_POST
def invite_revoke(request: OrganizationHttpRequest, pk: int) -> HttpResponse:
    invite = get_object_or_404(Invite.objects.for_org(request.organization), pk=pk)
    services.invite_revoke(actor=request.membership, invite=invite)
    messages.success(request, "Invite revoked; its link no longer works.")
    return redirect("accounts:invites")


@require_http_methods(["GET", "POST"])
def invite_accept(request: HttpRequest, token: str) -> HttpResponse:
    """Anyone with the link sees who invites them; a logged-in person confirms to join."""
    invite = get_object_or_404(Invite.objects.select_related("organization"), token=token)
    if invite.accepted_at is not None or invite.revoked_at is not None or invite.is_expired:
        return render(request, "accounts/invite_unavailable.html", status=410)
    if not request.user.is_authenticated:
        if request.method == "POST":
            return redirect_to_login(request.get_full_path())
        return render(request, "accounts/invite_accept.html", {"invite": invite})
    if request.method == "POST":
        try:
            services.invite_accept(invite=invite, user=request.user)
        except services.AlreadyMember as error:
            messages.info(request, error.message)
        except services.InviteUnavailable:
            return render(request, "accounts/invite_unavailable.html", status=410)
        else:
            messages.success(request, f"You joined {invite.organization} as {invite.get_role_display().lower()}.")
        _select_organization(request, invite.organization_id)
        return redirect("agents:list")
    return render(request, "accounts/invite_accept.html", {"invite": invite})


@manager_required
@require_http_methods(["GET", "POST"])
@never_cache
def api_key_list(request: OrganizationHttpRequest) -> HttpResponse:
    form = ApiKeyForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        api_key, raw_key = services.api_key_create(
            organization=request.organization,
            created_by=request.user,
            name=form.cleaned_data["name"],
        )
        # Rendered in the response to the POST, not stored anywhere: this is the only time it is shown.
        return render(request, "accounts/api_key_created.html", {"api_key": api_key, "raw_key": raw_key}, status=201)
    api_keys = ApiKey.objects.for_org(request.organization).select_related("created_by").order_by("-created_at")
    return render(request, "accounts/api_keys.html", {"form": form, "api_keys": api_keys})


@manager_required
@require_POST
def api_key_revoke(request: OrganizationHttpRequest, pk: int) -> HttpResponse:
    api_key = get_object_or_404(ApiKey.objects.for_org(request.organization), pk=pk)
    services.api_key_revoke(api_key=api_key)
    messages.success(request, f"Revoked {api_key.name}; requests with it are now refused.")
    return redirect("accounts:api_keys")
