"""The retry wrapper: transient errors are retried before any output, never after."""

from __future__ import annotations

import pytest

from agents.llm.anthropic import AnthropicClient
from agents.llm.base import LLMAuthenticationError, LLMConnectionError, LLMOverloaded, LLMRateLimited
from agents.llm.openai import OpenAIClient
from agents.llm.retry import RetryingClient, with_retries
from tests.fake_llm import FakeLLMServer, Fault, Reply
from tests.llm.helpers import collect, make_request


class SleepRecorder:
    """Stands in for ``asyncio.sleep`` so the test neither waits nor guesses the delays."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def retrying(client: AnthropicClient | OpenAIClient, sleep: SleepRecorder, **options: float) -> RetryingClient:
    return RetryingClient(client, sleep=sleep, jitter=0, **options)  # type: ignore[arg-type]


async def test_a_rate_limit_is_retried_after_its_retry_after_and_then_succeeds(
    fake_llm: FakeLLMServer, vendor_client: AnthropicClient | OpenAIClient, stream: bool
) -> None:
    fake_llm.script(Fault.rate_limited(retry_after=2), Reply(text="Made it."))
    sleep = SleepRecorder()

    answer = await collect(retrying(vendor_client, sleep), make_request("Hi"), stream=stream)

    assert answer.text == "Made it."
    assert sleep.delays == [2]
    assert len(fake_llm.requests) == 2


async def test_the_real_sleep_honours_a_short_retry_after(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient
) -> None:
    fake_llm.script(Fault.rate_limited(retry_after=0.01), Reply(text="Made it."))

    answer = await collect(with_retries(anthropic_client), make_request("Hi"), stream=True)

    assert answer.text == "Made it."


async def test_overloaded_and_connection_errors_back_off_exponentially(
    fake_llm: FakeLLMServer, openai_client: OpenAIClient
) -> None:
    fake_llm.script(Fault.overloaded(), Fault.drop_mid_stream(), Reply(text="Third time lucky."))
    sleep = SleepRecorder()

    answer = await collect(retrying(openai_client, sleep, base_delay=0.5), make_request("Hi"), stream=False)

    assert answer.text == "Third time lucky."
    assert sleep.delays == [0.5, 1.0]


async def test_a_failure_after_the_first_yielded_event_is_not_retried(
    fake_llm: FakeLLMServer, vendor_client: AnthropicClient | OpenAIClient
) -> None:
    fake_llm.script(Fault.drop_mid_stream(partial_text="Half an answer"), Reply(text="A duplicate."))
    sleep = SleepRecorder()
    seen = []

    with pytest.raises(LLMConnectionError):
        async for event in retrying(vendor_client, sleep).generate(make_request("Hi"), stream=True):
            seen.append(event)

    assert seen
    assert sleep.delays == []
    assert len(fake_llm.requests) == 1
    assert fake_llm.pending == 1


async def test_an_error_event_before_any_output_is_retried_and_one_after_output_is_not(
    fake_llm: FakeLLMServer, vendor_client: AnthropicClient | OpenAIClient
) -> None:
    fake_llm.script(
        Fault.error_event("overloaded_error"),
        Fault.error_event("overloaded_error", partial_text="Half"),
        Reply(text="never reached"),
    )
    sleep = SleepRecorder()

    with pytest.raises(LLMOverloaded):
        await collect(retrying(vendor_client, sleep), make_request("Hi"), stream=True)

    assert len(sleep.delays) == 1
    assert len(fake_llm.requests) == 2
    assert fake_llm.pending == 1


async def test_an_error_that_is_not_transient_is_raised_at_once(
    fake_llm: FakeLLMServer, anthropic_client: AnthropicClient
) -> None:
    fake_llm.script(Fault.unauthorized(), Reply(text="never"))
    sleep = SleepRecorder()

    with pytest.raises(LLMAuthenticationError):
        await collect(retrying(anthropic_client, sleep), make_request("Hi"), stream=False)

    assert len(fake_llm.requests) == 1


async def test_it_gives_up_after_max_attempts(fake_llm: FakeLLMServer, anthropic_client: AnthropicClient) -> None:
    fake_llm.script(Fault.overloaded(), Fault.overloaded(), Fault.overloaded(), Reply(text="too late"))
    sleep = SleepRecorder()

    with pytest.raises(LLMOverloaded):
        await collect(retrying(anthropic_client, sleep, max_attempts=3), make_request("Hi"), stream=True)

    assert len(fake_llm.requests) == 3
    assert len(sleep.delays) == 2


async def test_a_retry_after_longer_than_max_delay_is_raised_rather_than_waited_out(
    fake_llm: FakeLLMServer, openai_client: OpenAIClient
) -> None:
    fake_llm.script(Fault.rate_limited(retry_after=120), Reply(text="too late"))
    sleep = SleepRecorder()

    with pytest.raises(LLMRateLimited) as raised:
        await collect(retrying(openai_client, sleep, max_delay=20), make_request("Hi"), stream=True)

    assert raised.value.retry_after == 120
    assert sleep.delays == []


def test_backoff_is_capped_at_max_delay() -> None:
    client = RetryingClient(AnthropicClient(api_key="unused"), base_delay=1, max_delay=3, jitter=0, max_attempts=9)

    delays = [client.delay_before_retry(LLMOverloaded("busy"), attempt=n, yielded=False) for n in range(1, 5)]

    assert delays == [1, 2, 3, 3]


def test_wrapping_twice_keeps_a_single_layer_of_retries() -> None:
    inner = AnthropicClient(api_key="unused")

    twice = with_retries(with_retries(inner, max_attempts=5), max_attempts=2)

    assert twice.inner is inner
    assert twice.max_attempts == 2
    assert twice.provider == "anthropic"
