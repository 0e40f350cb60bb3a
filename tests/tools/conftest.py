from __future__ import annotations

import pytest

from tests.tools.helpers import FAST_LIMITS
from tools.runtime import DefaultToolRunner
from tools.sandbox.base import SandboxBackend
from tools.sandbox.selection import get_sandbox_backend


@pytest.fixture
def sandbox() -> SandboxBackend:
    """The backend the server picks by default; CI must provide bubblewrap (apt-get install bubblewrap)."""
    backend = get_sandbox_backend()
    assert backend.name == "bubblewrap", f"bubblewrap is unusable here: {getattr(backend, 'reason', backend)}"
    return backend


@pytest.fixture
def process_sandbox(settings) -> SandboxBackend:
    """The unisolated backend, as the server builds it when asked for by name (unsafe-no-isolation)."""
    settings.TOOL_SANDBOX_BACKEND = "unsafe-no-isolation"
    backend = get_sandbox_backend()
    assert backend.name == "process"
    return backend


@pytest.fixture
def runner(sandbox: SandboxBackend) -> DefaultToolRunner:
    return DefaultToolRunner(sandbox=sandbox, limits=FAST_LIMITS)
