"""``python -m tests.fake_llm --port N``: the fake LLM server as its own process.

Prints ``fake LLM listening on http://host:port`` once it accepts connections and
serves until SIGTERM or Ctrl-C. ``--anthropic-model ID`` (repeatable) adds a model to
the Anthropic listing, for a server that only takes a model it has seen listed (Letta).

``--no-record`` keeps no model requests (``GET /__requests__`` answers none): a benchmark
reads none, and keeping every request body only grows the process's heap, until its full
collections pause it for 40-90 ms near the end of a 300-turn run (seen as spikes in the
model call's time).
"""

from __future__ import annotations

import argparse
import signal
import sys

from tests.fake_llm import listings
from tests.fake_llm.server import FakeLLMServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fake_llm", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on start)")
    parser.add_argument("--anthropic-model", action="append", default=[], help="also list this Anthropic model")
    parser.add_argument("--no-record", action="store_true", help="keep no model requests (benchmarks)")
    args = parser.parse_args(argv)
    server = FakeLLMServer(args.host, args.port, record=not args.no_record)
    if args.anthropic_model:
        extra = [
            {"type": "model", "id": model, "display_name": model, "created_at": "2025-01-01T00:00:00Z"}
            for model in args.anthropic_model
        ]
        server.set_listing("anthropic", [*listings.ANTHROPIC_MODELS, *extra])
    signal.signal(signal.SIGTERM, _interrupt)
    sys.stdout.write(f"fake LLM listening on {server.url}\n")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
