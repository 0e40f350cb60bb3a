"""Which backend runs source tools (TOOL_SANDBOX_BACKEND), and the per-call uid leases."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from tools.sandbox.base import SandboxLimits, SandboxResult
from tools.sandbox.selection import SOURCE_TOOLS_OFF, get_sandbox_backend, source_tools_notice, world_usable
from tools.sandbox.uids import UidPool


class EchoingRemoteSandbox:
    """Stands for an operator's own backend (a container or remote sandbox) plugged in by dotted path."""

    name = "remote"

    async def execute(
        self,
        source_code: str,
        function_name: str | None,
        arguments: dict[str, Any],
        env: dict[str, str],
        limits: SandboxLimits,
    ) -> SandboxResult:
        return SandboxResult(ok=True, value=f"remote ran {function_name}")


def test_auto_picks_bubblewrap_when_it_works():
    assert get_sandbox_backend().name == "bubblewrap"


def test_process_picks_an_interpreter_the_sandbox_uid_can_run(process_sandbox):
    assert world_usable(process_sandbox.python)


def test_disabled_turns_source_tools_off(settings):
    settings.TOOL_SANDBOX_BACKEND = "disabled"
    assert get_sandbox_backend().name == "unavailable"


def test_an_unknown_choice_is_a_configuration_error(settings):
    settings.TOOL_SANDBOX_BACKEND = "docker-please"
    with pytest.raises(ImproperlyConfigured, match="TOOL_SANDBOX_BACKEND='docker-please'"):
        get_sandbox_backend()


async def test_a_dotted_path_plugs_in_another_backend(settings):
    settings.TOOL_SANDBOX_BACKEND = f"{__name__}.EchoingRemoteSandbox"
    backend = get_sandbox_backend()
    result = await backend.execute("", "roll", {}, {}, SandboxLimits())
    assert result.value == "remote ran roll"


def test_limits_come_from_settings_with_sane_defaults(settings):
    assert SandboxLimits.from_settings() == SandboxLimits()
    assert (SandboxLimits().wall_seconds, SandboxLimits().cpu_seconds, SandboxLimits().memory_bytes) == (
        10,
        5,
        256 << 20,
    )
    settings.TOOL_SANDBOX_MEMORY_BYTES = 64 << 20
    settings.TOOL_SANDBOX_NETWORK = True
    limits = SandboxLimits.from_settings()
    assert (limits.memory_bytes, limits.network) == (64 << 20, True)


def test_concurrent_leases_never_share_a_uid(tmp_path):
    pool = UidPool(base=1_900_000_000, count=4, lock_dir=tmp_path / "uids")
    leases = [pool.acquire() for _ in range(4)]
    assert sorted(lease.uid for lease in leases) == list(range(1_900_000_000, 1_900_000_004))
    with pytest.raises(RuntimeError, match="No free sandbox uid"):
        pool.acquire()
    leases[0].release()
    assert pool.acquire().uid == leases[0].uid


def test_the_lease_directory_must_be_private(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    with pytest.raises(RuntimeError, match="mode 0700"):
        UidPool(base=1_900_000_000, count=4, lock_dir=shared).acquire()


def test_a_uid_range_overlapping_system_users_is_refused():
    with pytest.raises(ValueError, match="Invalid sandbox uid range"):
        UidPool(base=0, count=10, lock_dir=Path(os.devnull))


@pytest.fixture
def no_bwrap_on_path(monkeypatch, tmp_path):
    """A host without bubblewrap: a PATH whose only python is the server's."""
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))


def test_without_bwrap_on_the_path_source_tools_are_off_with_one_notice(no_bwrap_on_path, caplog):
    with caplog.at_level(logging.INFO, logger="tools.sandbox.selection"):
        backend = get_sandbox_backend()

    assert backend.name == "unavailable"
    assert source_tools_notice() == SOURCE_TOOLS_OFF
    assert [record.getMessage() for record in caplog.records] == [f"Tool sandbox: {SOURCE_TOOLS_OFF}."]
    assert "install bubblewrap (apt-get install bubblewrap)" in SOURCE_TOOLS_OFF


def test_with_bubblewrap_working_there_is_no_notice():
    assert source_tools_notice() is None


@pytest.mark.django_db
def test_the_tools_page_shows_the_notice_without_bwrap(client, cast, no_bwrap_on_path):
    client.force_login(cast.alice)

    page = client.get(reverse("tools:list")).content.decode()

    assert "Source tools are off: install bubblewrap (apt-get install bubblewrap)" in page
