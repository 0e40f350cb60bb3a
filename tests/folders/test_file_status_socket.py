"""A file's processing is heard over the sockets as it is written: the folder's Files page socket and the
chat of every agent the folder is attached to get each ``file_status`` (parsing, embedding, completed,
or error with its reason) in order; the folder's socket admits members of its organization only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from accounts.access import SESSION_ORGANIZATION_KEY
from folders import attachments, services
from tests.folders.conftest import upload_file
from tests.support.sockets import RECEIVE_TIMEOUT, open_chat

if TYPE_CHECKING:
    from accounts.models import Organization
    from agents.models import Agent
    from folders.models import Folder
    from tests.conftest import Cast

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def threaded(settings: Any) -> None:
    settings.FOLDERS_PROCESSING = "thread"  # processed beside the test's loop, as the embedded server does


async def open_folder(app: Any, user: Any, folder: Folder, organization: Organization | None) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(app, f"/ws/folders/{folder.public_id}/")
    communicator.scope["user"] = user
    communicator.scope["session"] = {SESSION_ORGANIZATION_KEY: organization.pk if organization else None}
    return communicator


async def statuses_until_done(communicator: WebsocketCommunicator) -> list[tuple[str, Any]]:
    """The ``file_status`` frames heard, as (status, chunks embedded), until the file is completed or failed."""
    heard: list[tuple[str, Any]] = []
    while not heard or heard[-1][0] not in ("completed", "error"):
        frame = await communicator.receive_json_from(timeout=RECEIVE_TIMEOUT)
        if frame.get("type") == "file_status":
            heard.append((frame["file"]["processing_status"], frame["file"]["chunks_embedded"]))
    return heard


async def test_the_files_page_and_an_attached_agents_chat_hear_each_status_in_order(
    chat_app: Any, cast: Cast, agent: Agent, threaded: None
) -> None:
    folder = await database_sync_to_async(services.folder_create)(organization=cast.org_a, name="manuals")
    await database_sync_to_async(attachments.folder_attach)(agent=agent, folder=folder)
    page = await open_folder(chat_app, cast.alice, folder, cast.org_a)
    assert (await page.connect())[0]
    chat, connected, _ = await open_chat(chat_app, cast.alice, agent, organization=cast.org_a)
    assert connected

    await database_sync_to_async(services.file_upload)(folder=folder, upload=upload_file("notes.md"))
    on_page = await statuses_until_done(page)
    in_chat = await statuses_until_done(chat)

    assert [status for status, _ in on_page] == ["parsing", "embedding", "completed"]
    assert on_page[1][1] == 0 and on_page[-1][1] >= 1
    assert in_chat == on_page
    await page.disconnect()
    await chat.disconnect()


async def test_a_corrupt_file_is_heard_failing_with_its_reason(chat_app: Any, cast: Cast, threaded: None) -> None:
    folder = await database_sync_to_async(services.folder_create)(organization=cast.org_a, name="manuals")
    page = await open_folder(chat_app, cast.alice, folder, cast.org_a)
    assert (await page.connect())[0]

    await database_sync_to_async(services.file_upload)(folder=folder, upload=upload_file("corrupt.pdf"))
    heard = []
    while not heard or heard[-1]["processing_status"] != "error":
        heard.append((await page.receive_json_from(timeout=RECEIVE_TIMEOUT))["file"])

    assert [file["processing_status"] for file in heard] == ["parsing", "error"]
    assert heard[-1]["error_message"].startswith("Could not parse corrupt.pdf")
    await page.disconnect()


async def test_the_folder_socket_refuses_anonymous_visitors_and_another_organizations_members(
    chat_app: Any, cast: Cast
) -> None:
    folder = await database_sync_to_async(services.folder_create)(organization=cast.org_a, name="manuals")

    communicators = [
        await open_folder(chat_app, AnonymousUser(), folder, None),
        await open_folder(chat_app, cast.charlie, folder, cast.org_b),
    ]
    anonymous, outsider = [await communicator.connect() for communicator in communicators]
    for communicator in communicators:
        await communicator.disconnect()

    assert anonymous == (False, 4401)
    assert outsider == (False, 4404)
