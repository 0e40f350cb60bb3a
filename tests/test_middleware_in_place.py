"""Django's middleware hooks that do no I/O run on the event loop under ASGI (``config.middleware``),
with the same answers as through a thread."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest
from django.middleware.common import CommonMiddleware

from config.middleware import InPlaceHooks

if TYPE_CHECKING:
    from django.test import AsyncClient

    from tests.conftest import Cast

pytestmark = pytest.mark.django_db(transaction=True)


def on_the_loop(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each call of ``CommonMiddleware.process_request`` ran on the event loop."""
    seen: list[bool] = []
    original = CommonMiddleware.process_request

    def process_request(self: CommonMiddleware, request: Any) -> Any:
        try:
            asyncio.get_running_loop()
            seen.append(True)
        except RuntimeError:
            seen.append(False)
        return original(self, request)

    monkeypatch.setattr(CommonMiddleware, "process_request", process_request)
    return seen


async def test_an_api_request_runs_the_hooks_on_the_loop_and_answers_as_through_a_thread(
    async_client: AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = on_the_loop(monkeypatch)

    response = await async_client.get("/v1/health/")
    monkeypatch.setattr(InPlaceHooks, "in_place", lambda self, request: False)  # Django's way: a thread each
    through_threads = await async_client.get("/v1/health/")

    assert seen == [True, False]
    assert response.status_code == through_threads.status_code == 200
    assert dict(response.headers) == dict(through_threads.headers)
    assert response["X-Frame-Options"] == "DENY"


async def test_a_signed_in_page_keeps_its_session_and_policy_through_asgi(
    async_client: AsyncClient, cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    await async_client.aforce_login(cast.alice)

    response = await async_client.get("/")

    assert response.status_code == 200
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
    assert "Cookie" in response["Vary"]
