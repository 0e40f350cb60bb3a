"""One test in place of a group that cannot run here, so a missing prerequisite is one line, not one per test."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pathlib import Path


class StandIn(pytest.Item):
    """Fails with ``message`` (no traceback), or is skipped with it when the group may be left out."""

    def __init__(self, *, message: str, check: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.message = message
        self.check = check

    def runtest(self) -> None:
        pytest.fail(self.message, pytrace=False)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, self.check


def stand_in_for(
    config: pytest.Config,
    items: list[pytest.Item],
    group: list[pytest.Item],
    *,
    name: str,
    check: str,
    message: str,
    skip: bool,
) -> None:
    """Replace ``group`` (some of ``items``) by one stand-in, reported as deselecting the group.

    The stand-in lives in the first test's module, so it carries that module's marks.
    """
    first = items.index(group[0])
    stand_in = StandIn.from_parent(group[0].parent, name=name, check=check, message=message)
    if skip:
        stand_in.add_marker(pytest.mark.skip(reason=message))
    config.hook.pytest_deselected(items=group)
    left_out = set(group)
    items[:] = [item for item in items if item not in left_out]
    items.insert(first, stand_in)
