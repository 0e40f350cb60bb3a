"""Pages: import an agent file (upload, preview of what will be created, then import) and export one.

The preview runs the import and rolls it back (``importer.agentfile_preview``), so it shows
exactly what the import will create; the uploaded file waits in the cache meanwhile, under a
token only this organization's page holds.
"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING

from django.contrib import messages
from django.core.cache import cache
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from accounts.decorators import membership_required
from agentfiles.exporter import agentfile_export
from agentfiles.forms import AgentFileImportForm
from agentfiles.importer import ImportOptions, agentfile_import, agentfile_preview, check_size
from agentfiles.schema import AgentFileError
from agents.errors import ApplicationError
from agents.selectors import agent_get_or_404

if TYPE_CHECKING:
    from accounts.http import OrganizationHttpRequest

PREVIEW_SECONDS = 15 * 60


def _cache_key(request: OrganizationHttpRequest, token: str) -> str:
    return f"agentfiles:preview:{request.organization.pk}:{token}"


def _options(data: dict[str, object]) -> ImportOptions:
    return ImportOptions(
        name=str(data.get("name") or "") or None,
        model=str(data.get("model") or "") or None,
        strip_messages=bool(data.get("strip_messages")),
    )


def _raw(request: OrganizationHttpRequest, data: dict[str, object]) -> tuple[bytes, str, str]:
    """The file's bytes, its name and its token: a new upload is kept under a new token."""
    upload = data.get("file")
    if upload is not None:
        check_size(upload.size or 0)  # type: ignore[attr-defined]
        raw: bytes = upload.read()  # type: ignore[attr-defined]
        token = secrets.token_urlsafe(16)
        cache.set(_cache_key(request, token), {"raw": raw, "name": upload.name}, PREVIEW_SECONDS)  # type: ignore[attr-defined]
        return raw, str(upload.name), token  # type: ignore[attr-defined]
    token = str(data.get("token") or "")
    kept = cache.get(_cache_key(request, token))
    if kept is None:
        raise AgentFileError("The uploaded file is no longer kept (previews last 15 minutes); choose it again.")
    return kept["raw"], kept["name"], token


@membership_required
@require_http_methods(["GET", "POST"])
def agent_import(request: OrganizationHttpRequest) -> HttpResponse:
    form = AgentFileImportForm(request.POST or None, request.FILES or None, organization=request.organization)
    context: dict[str, object] = {"form": form}
    if request.method == "POST" and form.is_valid():
        try:
            raw, file_name, token = _raw(request, form.cleaned_data)
            options = _options(form.cleaned_data)
            if "import" not in request.POST:
                context |= {
                    "preview": agentfile_preview(organization=request.organization, raw=raw, options=options),
                    "file_name": file_name,
                    "token": token,
                }
                return render(request, "agentfiles/import.html", context)
            result = agentfile_import(
                organization=request.organization,
                created_by=request.user,
                raw=raw,
                options=options,
                file_name=file_name,
            )
        except ApplicationError as exc:
            context["error"] = str(exc.detail).removeprefix("INVALID_ARGUMENT: ")
            return render(request, "agentfiles/import.html", context, status=400)
        cache.delete(_cache_key(request, token))
        names = ", ".join(agent.name for agent in result.agents)
        messages.success(request, f"Imported {names} from {file_name}.")
        for warning in result.warnings:
            messages.warning(request, warning)
        return redirect("agents:chat", agent_id=result.agents[0].public_id)
    return render(request, "agentfiles/import.html", context, status=400 if form.errors else 200)


@membership_required
@require_GET
def agent_export(request: OrganizationHttpRequest, agent_id: str) -> HttpResponse:
    agent = agent_get_or_404(organization=request.organization, agent_id=agent_id)
    response = HttpResponse(json.dumps(agentfile_export(agent=agent), indent=2), content_type="application/json")
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in agent.name) or "agent"
    response["Content-Disposition"] = f'attachment; filename="{safe}.af"'
    return response
