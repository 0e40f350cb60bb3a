"""Reduce a py-spy profile to two top-N tables: own time (the sampled leaf) and cumulative time.

Reads ``py-spy record --format raw`` (collapsed stacks: ``frame;frame;… count``) or
``--format speedscope`` (JSON). Frames are grouped without their line number, so a
function counts once however many of its lines were sampled; a frame that appears
twice in one stack (recursion) counts once for that stack. Percentages are of all
samples but those of threads that only wait (``IDLE_LEAVES``; ``--keep-idle`` keeps them). Prints Markdown::

    .venv/bin/python benchmarks/flame_summary.py profile.raw [--top 25] [--match agents/]

``--match`` adds a third table limited to frames whose file contains the text (the
project's own code, say).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

LINE_NUMBER = re.compile(r":\d+\)$")
SITE_PACKAGES = re.compile(r"^.*?/(site-packages|lib/python3\.\d+)/")
ROOT = str(Path(__file__).resolve().parent.parent) + "/"


def frame_name(frame: str) -> str:
    """``function (/…/site-packages/pkg/file.py:12)`` → ``function (pkg/file.py)``."""
    function, _, path = LINE_NUMBER.sub(")", frame.strip()).partition(" (")
    if not path:
        return function
    return f"{function} ({SITE_PACKAGES.sub('', path).replace(ROOT, '')}"


def read_stacks(path: Path) -> list[tuple[list[str], int]]:
    """Each sampled stack, root first, with its sample count."""
    text = path.read_text()
    if text.lstrip().startswith("{"):
        return _speedscope(json.loads(text))
    stacks = []
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            stacks.append(([frame_name(frame) for frame in stack.split(";")], int(count)))
    return stacks


def _speedscope(document: dict) -> list[tuple[list[str], int]]:
    frames = [
        frame_name(f"{frame['name']} ({frame.get('file', '?')}:{frame.get('line', 0)})")
        for frame in document["shared"]["frames"]
    ]
    stacks: Counter[tuple[str, ...]] = Counter()
    for profile in document["profiles"]:
        for sample, weight in zip(profile["samples"], profile["weights"], strict=True):
            stacks[tuple(frames[index] for index in sample)] += int(weight)
    return [(list(stack), count) for stack, count in stacks.items()]


# Leaves where a thread waits rather than works: a pool thread for its next item, the event loop
# for I/O, a lock or a condition. py-spy's own idle detection lets some through.
IDLE_LEAVES = (
    "Condition.wait (threading.py)",
    "EpollSelector.select (selectors.py)",
    "_worker (concurrent/futures/thread.py)",
    "Event.wait (threading.py)",
    "Thread.join (threading.py)",
)


def summarize(
    stacks: list[tuple[list[str], int]], *, keep_idle: bool = False
) -> tuple[int, Counter[str], Counter[str]]:
    """All samples (waits left out unless ``keep_idle``), own time by leaf, cumulative by frame."""
    own: Counter[str] = Counter()
    cumulative: Counter[str] = Counter()
    total = 0
    for stack, count in stacks:
        # py-spy's thread frame (``process 12:"MainThread"``) is no function: leave it out.
        frames = [frame for frame in stack if not frame.startswith(("process ", "thread "))]
        if not keep_idle and frames and frames[-1] in IDLE_LEAVES:
            continue
        total += count
        if frames:
            own[frames[-1]] += count
        for frame in set(frames):
            cumulative[frame] += count
    return total, own, cumulative


def table(title: str, counts: Counter[str], total: int, top: int) -> str:
    rows = [f"| {title} | samples | % |", "|---|---:|---:|"]
    for frame, count in counts.most_common(top):
        rows.append(f"| `{frame}` | {count} | {100 * count / total:.1f} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--match", help="also list the cumulative frames whose text contains this")
    parser.add_argument("--keep-idle", action="store_true", help="count threads waiting (IDLE_LEAVES) too")
    args = parser.parse_args()
    total, own, cumulative = summarize(read_stacks(args.profile), keep_idle=args.keep_idle)
    print(f"{total} samples from {args.profile.name}{'' if args.keep_idle else ' (waiting threads left out)'}\n")
    print(table("own time", own, total, args.top) + "\n")
    print(table("cumulative", cumulative, total, args.top) + "\n")
    if args.match:
        mine = Counter({frame: count for frame, count in cumulative.items() if args.match in frame})
        print(table(f"cumulative, frames matching {args.match!r}", mine, total, args.top))


if __name__ == "__main__":
    main()
