"""A file dropped into an agent's chat: it goes to the agent's folder (the first attached; with none, a
new folder named for the agent, attached like any other), and the chat tells the agent once it is
processed with the note worded here (sent as the person's next message, so the agent answers it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import transaction

from folders import services
from folders.attachments import folder_attach
from folders.models import Folder

if TYPE_CHECKING:
    from django.core.files.uploadedfile import UploadedFile

    from accounts.models import User
    from agents.models import Agent
    from folders.models import FileMetadata

NAME_TRIES = 20


@dataclass(frozen=True)
class Drop:
    file: FileMetadata
    folder: Folder
    note: str


def agent_folder(*, agent: Agent, user: User | None = None) -> Folder:
    """The folder the agent's chat uploads to: its first attached folder, else a new one named for it."""
    attached = Folder.objects.for_org(agent.organization_id).filter(agent_links__agent=agent)
    folder = attached.order_by("agent_links__created_at", "pk").first()
    if folder is not None:
        return folder
    taken = set(Folder.objects.for_org(agent.organization_id).values_list("name", flat=True))
    names = [agent.name, *(f"{agent.name} ({n})" for n in range(2, NAME_TRIES + 1))]
    name = next((name for name in names if name not in taken), f"{agent.name} ({agent.public_id})")
    description = f"Files dropped into the chat with {agent.name}."
    folder = services.folder_create(organization=agent.organization, user=user, name=name, description=description)
    folder_attach(agent=agent, folder=folder)
    return folder


def drop_note(file: FileMetadata, folder: Folder) -> str:
    return (
        f"I uploaded the file {file.file_name} to the folder {folder.name}. "
        "Read it with open_files, grep_files or semantic_search_files."
    )


def agent_file_drop(*, agent: Agent, upload: UploadedFile, user: User | None = None) -> Drop:
    """Store ``upload`` in the agent's folder (refused uploads change nothing: ``services.file_upload``)."""
    with transaction.atomic():
        folder = agent_folder(agent=agent, user=user)
        stored = services.file_upload(folder=folder, upload=upload)
    stored.file.refresh_from_db()  # as it is now: processed already when processing is inline
    return Drop(file=stored.file, folder=folder, note=drop_note(stored.file, folder))
