"""A Files page's WebSocket, at ``/ws/folders/<folder id>/``: the ``file_status`` payloads of the
folder's files as ``folders.broadcast`` announces them (the page polls only while this is down).

A logged-in member of the folder's organization only: anyone else is closed with 4401 or 4404
(another organization's folder is not found), before joining the folder's group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from accounts.access import SESSION_ORGANIZATION_KEY
from agents.sockets import CLOSE_NOT_FOUND, CLOSE_UNAUTHENTICATED, socket_organization, socket_user
from core.errors import NotFound
from folders import selectors
from folders.broadcast import folder_group

if TYPE_CHECKING:
    from django.contrib.sessions.backends.base import SessionBase

    from accounts.models import User


class FolderFilesConsumer(AsyncJsonWebsocketConsumer):
    group: str

    async def connect(self) -> None:
        user = socket_user(self.scope)
        if user is None:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        session: SessionBase | dict[str, Any] = self.scope.get("session") or {}
        try:
            folder_pk = await database_sync_to_async(self._folder_pk)(user, session.get(SESSION_ORGANIZATION_KEY))
        except NotFound:
            await self.close(code=CLOSE_NOT_FOUND)
            return
        self.group = folder_group(folder_pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    def _folder_pk(self, user: User, organization_id: Any) -> Any:
        """The folder of the URL in the organization the user acts for; another's is ``NotFound``."""
        organization = socket_organization(user, organization_id)
        folder_id = str(self.scope["url_route"]["kwargs"]["folder_id"])
        return selectors.folder_get(organization=organization, folder_id=folder_id).pk

    async def disconnect(self, code: int) -> None:
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def folder_events(self, message: dict[str, Any]) -> None:
        for payload in message["events"]:
            await self.send_json(payload)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        await self.send_json({"type": "error", "detail": "This socket only listens.", "request": None})
