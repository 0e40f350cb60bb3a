"""Every model call is bounded: a silent provider and a slow whole answer end the call with ``LLMTimeout``."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from agents.engine.stop import StopReason, stop_reason_for
from agents.llm.anthropic import AnthropicClient
from agents.llm.base import LLMTimeout
from agents.llm.openai import OpenAIClient
from agents.llm.retry import RetryingClient
from agents.llm.sdk import Timeouts
from tests.fake_llm.script import Reply
from tests.llm.helpers import collect, make_request

if TYPE_CHECKING:
    from tests.fake_llm.server import FakeLLMServer

SILENCE = 2.0  # how long the fake provider stays silent; every bound below is far shorter


def client_for(vendor: str, fake_llm: FakeLLMServer, timeouts: Timeouts) -> AnthropicClient | OpenAIClient:
    if vendor == "anthropic":
        return AnthropicClient(api_key="test-anthropic-key", base_url=fake_llm.base_url_anthropic, timeouts=timeouts)
    return OpenAIClient(api_key="test-openai-key", base_url=fake_llm.base_url_openai, timeouts=timeouts)


@pytest.fixture(params=["anthropic", "openai"])
def vendor(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize(
    ("timeouts", "message"),
    [
        (Timeouts(connect=1, first_byte=0.3, total=30), r"sent nothing within the first-byte timeout"),
        (
            Timeouts(connect=1, first_byte=30, total=0.3),
            r"did not finish its answer within 0\.3 s \(LLM_TOTAL_TIMEOUT\)",
        ),
    ],
    ids=["silent-past-the-first-byte-timeout", "not-finished-within-the-total-timeout"],
)
async def test_a_provider_past_a_timeout_ends_the_call_with_the_timeout_named(
    fake_llm: FakeLLMServer, vendor: str, stream: bool, timeouts: Timeouts, message: str
) -> None:
    fake_llm.script(Reply(text="Too late.", delay=SILENCE))
    client = client_for(vendor, fake_llm, timeouts)
    started = time.monotonic()

    with pytest.raises(LLMTimeout, match=message) as raised:
        await collect(client, make_request("Hi"), stream=stream)

    assert time.monotonic() - started < SILENCE
    assert stop_reason_for(raised.value) is StopReason.LLM_API_ERROR


async def test_a_timed_out_call_is_not_retried(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(Reply(text="Too late.", delay=SILENCE), Reply(text="Never asked for."))
    client = client_for("openai", fake_llm, Timeouts(connect=1, first_byte=0.3, total=30))

    with pytest.raises(LLMTimeout):
        await collect(RetryingClient(client, max_attempts=3), make_request("Hi"), stream=True)

    assert len(fake_llm.requests) == 1


def test_the_timeouts_come_from_the_settings(settings) -> None:
    settings.LLM_CONNECT_TIMEOUT = 4
    settings.LLM_FIRST_BYTE_TIMEOUT = 5
    settings.LLM_TOTAL_TIMEOUT = 6

    assert OpenAIClient(api_key="k").timeouts == Timeouts(connect=4, first_byte=5, total=6)
