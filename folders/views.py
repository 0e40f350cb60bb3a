"""The Folders pages: the organization's folders, and per folder its files with upload, live progress and a
preview of the parsed text. Each view parses a form, calls one service and renders or redirects; another
organization's folder or file is a 404 (``folders.selectors``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import messages
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from accounts.decorators import membership_required
from core.errors import ApplicationError, NotFound
from folders import selectors, services
from folders.forms import FolderForm, UploadForm
from folders.wire import file_json

if TYPE_CHECKING:
    from django.core.files.uploadedfile import UploadedFile
    from django.http import HttpResponse

    from accounts.http import OrganizationHttpRequest
    from folders.models import Folder


def _folder(request: OrganizationHttpRequest, folder_id: str) -> Folder:
    try:
        return selectors.folder_get(organization=request.organization, folder_id=folder_id)
    except NotFound as exc:
        raise Http404(str(exc)) from exc


@membership_required
@require_http_methods(["GET", "POST"])
def folder_list(request: OrganizationHttpRequest) -> HttpResponse:
    form = FolderForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            folder = services.folder_create(organization=request.organization, user=request.user, **form.cleaned_data)
        except ApplicationError as exc:
            form.add_error("name", str(exc.detail).removeprefix("INVALID_ARGUMENT: "))
        else:
            return redirect("folders:detail", folder_id=folder.public_id)
    folders = selectors.folder_list(
        organization=request.organization, name=None, after=None, before=None, limit=1000, order="asc"
    )
    counts = {row.pk: row.files.count() for row in folders}
    rows = [(folder, counts[folder.pk]) for folder in folders]
    return render(request, "folders/list.html", {"form": form, "folders": rows}, status=400 if form.errors else 200)


def _upload(folder: Folder, upload: UploadedFile) -> str | None:
    """Store one upload; the reason it was refused, if it was."""
    try:
        services.file_upload(folder=folder, upload=upload)
    except ApplicationError as exc:
        return f"{upload.name}: {str(exc.detail).removeprefix('INVALID_ARGUMENT: ')}"
    return None


@membership_required
@require_http_methods(["GET", "POST"])
def folder_detail(request: OrganizationHttpRequest, folder_id: str) -> HttpResponse:
    """The folder's files; POST uploads one (a form, or the page's drag-and-drop, which asks for JSON)."""
    folder = _folder(request, folder_id)
    form = UploadForm()
    wants_json = request.headers.get("Accept", "").startswith("application/json")
    if request.method == "POST":
        uploads = request.FILES.getlist("file")
        errors = [error for upload in uploads if (error := _upload(folder, upload))] if uploads else ["Choose a file."]
        if wants_json:
            return JsonResponse({"error": " ".join(errors) or None}, status=400 if errors else 200)
        for error in errors:
            messages.error(request, error)
        return redirect("folders:detail", folder_id=folder.public_id)
    files = selectors.file_list(folder=folder, after=None, before=None, limit=1000, order="desc")
    return render(request, "folders/detail.html", {"folder": folder, "files": files, "form": form})


@membership_required
@require_GET
def folder_status(request: OrganizationHttpRequest, folder_id: str) -> JsonResponse:
    """The folder's files as the API shows them: what the page polls while any is being processed."""
    folder = _folder(request, folder_id)
    files = selectors.file_list(folder=folder, after=None, before=None, limit=1000, order="desc")
    return JsonResponse({"files": [file_json(file) for file in files]})


@membership_required
@require_GET
def file_preview(request: OrganizationHttpRequest, folder_id: str, file_id: str) -> HttpResponse:
    folder = _folder(request, folder_id)
    try:
        file = selectors.file_get(folder=folder, file_id=file_id)
    except NotFound as exc:
        raise Http404(str(exc)) from exc
    return render(request, "folders/preview.html", {"folder": folder, "file": file})
