"""The MCP servers page, for owners and admins: add a server, test it, see its tools and what they do, attach them.

Each view parses a form, calls one service and renders or redirects. Another organization's
server (or agent, or tool) is a 404.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.decorators import manager_required
from accounts.pages import confirm_delete, or_404
from agents import selectors as agent_selectors
from agents import services as agent_services
from core.errors import ApplicationError, NotFound
from mcp_servers import oauth, selectors, services
from mcp_servers.forms import AttachToolForm, MCPServerForm

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpResponse

    from accounts.http import OrganizationHttpRequest
    from mcp_servers.models import MCPServer


def _server(request: OrganizationHttpRequest, server_id: str) -> MCPServer:
    return or_404(selectors.server_get, organization=request.organization, server_id=server_id)


def _text(exc: ApplicationError) -> str:
    return str(exc).removeprefix("INVALID_ARGUMENT: ").removeprefix("TIMEOUT: ")


def _sync(request: OrganizationHttpRequest, name: str, sync: Callable[[], dict[str, list[str]]], *, done: str) -> None:
    """Run ``sync`` (it lists the server's tools and registers the new ones); say which it added, or why it failed."""
    try:
        changes = sync()
    except ApplicationError as exc:
        messages.error(request, f"{name}: {_text(exc)}")
    else:
        added = ", ".join(changes["added"]) or "none"
        messages.success(request, f"{done} New tools: {added}.")


@manager_required
@require_http_methods(["GET", "POST"])
def server_list(request: OrganizationHttpRequest) -> HttpResponse:
    """The organization's servers with their tools; POST adds one (its tools are registered at once)."""
    form = MCPServerForm(request.POST or None)
    status = 200
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            server = services.server_create(
                organization=request.organization,
                user=request.user,
                server_name=data["server_name"],
                server_type=data["server_type"],
                server_url=data["server_url"],
                token=data["token"] or None,
                custom_headers=data["headers"],
            )
        except ApplicationError as exc:
            form.add_error("server_url" if getattr(exc, "field", None) == "server_url" else None, _text(exc))
            status = 400
        else:
            if server.last_error:
                messages.warning(request, f"Added {server.server_name}, but it did not answer: {server.last_error}")
            else:
                messages.success(request, f"Added {server.server_name} and registered its tools.")
            return redirect("mcp_servers:list")
    elif request.method == "POST":
        status = 400
    cards = [
        (server, list(selectors.server_tools(server)), oauth.authorized_session(server=server, user=request.user))
        for server in selectors.server_list(organization=request.organization)
    ]
    context = {
        "form": form,
        "cards": cards,
        "agents": agent_selectors.agent_list(organization=request.organization, limit=200),
    }
    return render(request, "mcp_servers/list.html", context, status=status)


@manager_required
@require_POST
def server_check(request: OrganizationHttpRequest, server_id: str) -> HttpResponse:
    """Connect, list the tools and sync the registered ones."""
    server = _server(request, server_id)
    name = server.server_name
    _sync(request, name, lambda: services.server_refresh(server=server), done=f"{name}: the connection works.")
    return redirect("mcp_servers:list")


@manager_required
@require_POST
def tool_attach(request: OrganizationHttpRequest) -> HttpResponse:
    form = AttachToolForm(request.POST)
    if not form.is_valid():
        raise Http404("Choose an agent and a tool.")
    try:
        agent = agent_selectors.agent_get(organization=request.organization, agent_id=form.cleaned_data["agent_id"])
        tool = next(
            tool
            for server in selectors.server_list(organization=request.organization)
            for tool in selectors.server_tools(server)
            if tool.public_id == form.cleaned_data["tool_id"]
        )
    except (NotFound, StopIteration) as exc:
        raise Http404("No such agent or MCP tool.") from exc
    agent_services.agent_attach_tool(agent=agent, tool=tool)
    messages.success(request, f"Attached {tool.name} to {agent.name}.")
    return redirect("mcp_servers:list")


@manager_required
@require_http_methods(["GET", "POST"])
def server_delete(request: OrganizationHttpRequest, server_id: str) -> HttpResponse:
    server = _server(request, server_id)
    return confirm_delete(
        request,
        "mcp_servers/confirm_delete.html",
        {"server": server},
        delete=lambda: services.server_delete(server=server),
        done=f"Deleted {server.server_name} and its tools.",
        then="mcp_servers:list",
    )


@manager_required
@require_POST
def server_connect(request: OrganizationHttpRequest, server_id: str) -> HttpResponse:
    """Start OAuth: register with the server's authorization server and link the person to its page."""
    server = _server(request, server_id)
    redirect_uri = request.build_absolute_uri(reverse("mcp_servers:oauth_callback"))
    try:
        _session, url = oauth.oauth_begin(server=server, user=request.user, redirect_uri=redirect_uri)
    except ApplicationError as exc:
        messages.error(request, f"{server.server_name}: {_text(exc)}")
        return redirect("mcp_servers:list")
    # A page with a link, not a redirect: the form-action CSP forbids a form's redirect to another site.
    context = {"server": server, "url": url, "host": urlsplit(url).netloc}
    return render(request, "mcp_servers/connect.html", context)


@manager_required
@require_GET
def oauth_callback(request: OrganizationHttpRequest) -> HttpResponse:
    """Where the authorization server sends the person back: store the tokens, list the tools."""
    session = oauth.pending_session(request.GET.get("state", ""))
    if (
        session is None
        or session.organization_id != request.organization.pk
        or session.created_by_id != request.user.pk
    ):
        messages.error(request, "This authorization is unknown or has expired. Connect the server again.")
        return redirect("mcp_servers:list")
    name = session.server.server_name
    if request.GET.get("error"):
        error = f"{request.GET['error']} - {request.GET.get('error_description', '')}".strip(" -")
        oauth.oauth_fail(session=session, error=error)
        messages.error(request, f"{name}: the authorization server answered {error}.")
        return redirect("mcp_servers:list")
    code = request.GET.get("code", "")
    _sync(
        request,
        name,
        lambda: services.server_oauth_connected(session=session, code=code),
        done=f"Connected {name} with OAuth.",
    )
    return redirect("mcp_servers:list")
