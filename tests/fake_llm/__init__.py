"""A fake LLM HTTP server of our own speaking the Anthropic and OpenAI protocols.

In tests use the ``fake_llm`` fixture (``tests.fake_llm.plugin``); for a separate
process run ``python -m tests.fake_llm --port N``.
"""

from tests.fake_llm.script import Fault, Reply
from tests.fake_llm.server import FakeLLMServer, RecordedRequest

__all__ = ["FakeLLMServer", "Fault", "RecordedRequest", "Reply"]
