"""What the tabs hear of folders, once committed (persist before you emit): every payload is state
(no ``seq``: the latest wins).

- ``file_status``: a file's row as the API shows it (``folders.wire.file_json``) after each status
  or progress write of its processing (``folders.processing``), to the tabs of its Files page
  (``folder_group``, ``folders.consumers``) and to the chat of every agent the folder is attached
  to (``agents.broadcast.publish``, the one sender to an agent's group), where a dropped file shows it.
- ``files_updated``: an agent's files as its memory panel lists them
  (``folders.attachments.panel_files``) when its open files change. Several changes in one
  transaction (attaching a folder opens each of its files) go out as one payload.

Sent from the thread that wrote the change: a request's, a file tool's, or a processing thread's.
With the embedded server, whose in-memory channel layer lives on its event loop, the payloads are
handed to that loop (``deliver_on``, wired by ``FoldersConfig.ready``) and awaited, so they go out
in the order they were written.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from agents.broadcast import publish
from agents.models import Agent
from folders.models import FileMetadata, FolderAgent
from folders.wire import file_json

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Iterable

    from folders.wire import PanelFile

logger = logging.getLogger(__name__)

FILES_UPDATED = "files_updated"
FILE_STATUS = "file_status"
DELIVER_TIMEOUT_S = 5.0

_server_loop: Callable[[], asyncio.AbstractEventLoop | None] = lambda: None  # noqa: E731


def deliver_on(loop: Callable[[], asyncio.AbstractEventLoop | None]) -> None:
    """Where payloads go out when a server's loop runs (``agents.runs.dispatch.server_loop``)."""
    global _server_loop
    _server_loop = loop


def folder_group(folder_pk: Any) -> str:
    return f"folder.{folder_pk}"


def _deliver(send: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
    loop = _server_loop()
    if loop is not None and loop.is_running():
        asyncio.run_coroutine_threadsafe(send(*args), loop).result(timeout=DELIVER_TIMEOUT_S)
    else:
        async_to_sync(send)(*args)


def announce_file(file: FileMetadata) -> None:
    """Tell the folder's page and its agents' chats the file's status and progress, once committed."""
    file_pk = file.pk

    def send() -> None:
        try:
            row = FileMetadata.objects.filter(pk=file_pk).first()
            if row is None:
                return
            payload = {"type": FILE_STATUS, "file": file_json(row, full_name=True)}
            agent_ids = list(FolderAgent.objects.filter(folder_id=row.folder_id).values_list("agent_id", flat=True))
            _deliver(_send_file_status, row.folder_id, agent_ids, payload)
        except Exception:
            # The status is committed either way; the page reads it on its next load (or its poll).
            logger.exception("Could not announce the status of file %s", file_pk)

    transaction.on_commit(send)


async def _send_file_status(folder_pk: Any, agent_ids: list[Any], payload: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    await layer.group_send(folder_group(folder_pk), {"type": "folder.events", "events": [payload]})
    for agent_id in agent_ids:
        await publish(agent_id, [payload])


def announce_open_files(agent_ids: Iterable[Any], panel: Callable[[Agent], list[PanelFile]]) -> None:
    """Tell each agent's tabs its open files once committed; ``panel`` lists them (computed on commit)."""
    connection = transaction.get_connection()
    waiting = {getattr(entry[1], "files_of_agent", None) for entry in connection.run_on_commit}
    for agent_id in set(agent_ids) - waiting:
        transaction.on_commit(_panel_sender(agent_id, panel))


def _panel_sender(agent_id: Any, panel: Callable[[Agent], list[PanelFile]]) -> Callable[[], None]:
    def send() -> None:
        try:
            agent = Agent.objects.filter(pk=agent_id).first()
            if agent is not None:
                payload = {"type": FILES_UPDATED, "files": panel(agent)}
                _deliver(publish, agent_id, [payload])
        except Exception:
            # The change is committed either way; a tab reads the list on its next load or run end.
            logger.exception("Could not tell the tabs of agent %s that its open files changed", agent_id)

    send.files_of_agent = agent_id  # type: ignore[attr-defined]
    return send
