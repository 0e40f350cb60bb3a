"""Waiting on a live server: poll until a condition holds, with a deadline instead of a fixed sleep."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

T = TypeVar("T")


def poll(read: Callable[[], T], until: Callable[[T], bool], *, timeout: float = 30, interval: float = 0.05) -> T:
    """``read()`` again and again until ``until`` holds for its value, which is returned.

    Raises ``TimeoutError`` with the last value read when ``timeout`` seconds pass first.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if until(value):
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"Still not there after {timeout}s; last value: {value!r}")
        time.sleep(interval)
