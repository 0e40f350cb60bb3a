"""Archives and running source by hand through the official ``letta-client`` 0.1.324 against a live server.

0.1.324 has ``archives.create_archive/list_archives/modify_archive`` and ``tools.run_tool_from_source``;
the rest of the archive surface is driven through 1.12 (``tests/sdk/archives_1x.py``).
"""

from __future__ import annotations

import uuid

import pytest
from letta_client import Letta

pytestmark = [pytest.mark.live_server, pytest.mark.sdk]

TWICE = '''
def twice(n: int) -> int:
    """Double it.

    Args:
        n: The number.
    """
    return n * 2
'''


def test_an_archive_is_created_listed_by_name_and_modified(sdk_client: Letta) -> None:
    name = f"papers-{uuid.uuid4().hex[:8]}"

    created = sdk_client.archives.create_archive(name=name, description="shared papers")
    listed = sdk_client.archives.list_archives(name=name)
    modified = sdk_client.archives.modify_archive(archive_id=created.id, description="renamed papers")

    assert created.id.startswith("archive-") and created.name == name
    assert [archive.id for archive in listed] == [created.id]
    assert (modified.name, modified.description) == (name, "renamed papers")


def test_source_runs_in_the_sandbox_and_answers_a_tool_return_message(sdk_client: Letta) -> None:
    ran = sdk_client.tools.run_tool_from_source(source_code=TWICE, args={"n": 21}, name="twice")

    assert (ran.message_type, ran.status, ran.tool_return) == ("tool_return_message", "success", "42")
    assert ran.name == "twice" and ran.tool_call_id == "null"
