"""``CollectWhenIdle``: the young generations are collected between requests, never during one."""

from __future__ import annotations

import asyncio
import gc
from typing import TYPE_CHECKING, Any

import pytest

from config.idle_collection import MIN_YOUNG_OBJECTS, CollectWhenIdle

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generations collected while the test runs; automatic collection is kept out of the way."""
    collected: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collected.append(info["generation"])

    thresholds = gc.get_threshold()
    gc.collect()
    gc.set_threshold(1_000_000, 20, 10)
    gc.callbacks.append(record)
    try:
        yield collected
    finally:
        gc.callbacks.remove(record)
        gc.set_threshold(*thresholds)


def leave_cycles(count: int) -> None:
    """What a request leaves behind: objects that only the cyclic collector frees."""
    for _ in range(count):
        node: dict[str, Any] = {}
        node["self"] = node


async def app_leaving_cycles(scope: Any, receive: Any, send: Any) -> None:
    leave_cycles(MIN_YOUNG_OBJECTS * 2)
    await asyncio.sleep(0)


async def request(app: CollectWhenIdle) -> None:
    await app({"type": "http", "path": "/"}, None, None)


async def settle() -> None:
    """Let the callbacks queued by the request's end run."""
    for _ in range(3):
        await asyncio.sleep(0)


async def test_the_young_generation_is_collected_once_no_request_is_in_flight(collections: list[int]) -> None:
    app = CollectWhenIdle(app_leaving_cycles)

    await request(app)
    assert collections == []  # not inside the request: after it
    await settle()

    assert collections == [0]
    assert gc.get_count()[0] < MIN_YOUNG_OBJECTS


async def test_nothing_is_collected_while_another_request_is_in_flight(collections: list[int]) -> None:
    release = asyncio.Event()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["path"] == "/slow":
            await release.wait()
        leave_cycles(MIN_YOUNG_OBJECTS * 2)

    wrapped = CollectWhenIdle(app)
    slow = asyncio.create_task(wrapped({"type": "http", "path": "/slow"}, None, None))
    await settle()
    await wrapped({"type": "http", "path": "/quick"}, None, None)
    await settle()
    assert collections == []

    release.set()
    await slow
    await settle()
    assert collections == [0]


async def test_the_middle_generation_is_collected_when_it_is_due(collections: list[int]) -> None:
    app = CollectWhenIdle(app_leaving_cycles)
    for _ in range(gc.get_threshold()[1]):
        gc.collect(0)

    await request(app)
    await settle()

    assert collections[-1] == 1


async def test_a_few_objects_are_not_worth_a_collection(collections: list[int]) -> None:
    async def tidy(scope: Any, receive: Any, send: Any) -> None:
        return None

    app = CollectWhenIdle(tidy)
    gc.collect(0)
    collections.clear()

    await request(app)
    await settle()

    assert collections == []


async def test_nothing_is_collected_when_automatic_collection_is_off(collections: list[int]) -> None:
    app = CollectWhenIdle(app_leaving_cycles)
    gc.set_threshold(0)

    await request(app)
    await settle()

    assert collections == []
