"""What the tabs hear of folders: the chat's memory panel when an agent's open files change.

Sent through ``agents.broadcast.publish`` (the one sender to an agent's group) once the change is
committed (persist before you emit), as a ``files_updated`` state payload (no ``seq``: the latest
wins) carrying the panel's list as ``folders.attachments.panel_files`` words it. Several changes in
one transaction (attaching a folder opens each of its files) go out as one payload.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync
from django.db import transaction

from agents.broadcast import publish
from agents.models import Agent

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from folders.wire import PanelFile

logger = logging.getLogger(__name__)

FILES_UPDATED = "files_updated"


def announce_open_files(agent_ids: Iterable[Any], panel: Callable[[Agent], list[PanelFile]]) -> None:
    """Tell each agent's tabs its open files once committed; ``panel`` lists them (computed on commit)."""
    connection = transaction.get_connection()
    waiting = {getattr(entry[1], "files_of_agent", None) for entry in connection.run_on_commit}
    for agent_id in set(agent_ids) - waiting:
        transaction.on_commit(_sender(agent_id, panel))


def _sender(agent_id: Any, panel: Callable[[Agent], list[PanelFile]]) -> Callable[[], None]:
    def send() -> None:
        try:
            agent = Agent.objects.filter(pk=agent_id).first()
            if agent is not None:
                async_to_sync(publish)(agent_id, [{"type": FILES_UPDATED, "files": panel(agent)}])
        except Exception:
            # The change is committed either way; a tab reads the list on its next load or run end.
            logger.exception("Could not tell the tabs of agent %s that its open files changed", agent_id)

    send.files_of_agent = agent_id  # type: ignore[attr-defined]
    return send
