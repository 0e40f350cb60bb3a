"""The sandboxed executor for source tools; ``SandboxBackend`` is the seam for stronger backends."""

from tools.sandbox.base import SandboxBackend, SandboxLimits, SandboxResult, UnavailableBackend

__all__ = ["SandboxBackend", "SandboxLimits", "SandboxResult", "UnavailableBackend"]
