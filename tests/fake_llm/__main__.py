"""``python -m tests.fake_llm --port N``: the fake LLM server as its own process.

Prints ``fake LLM listening on http://host:port`` once it accepts connections and
serves until SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import argparse
import signal
import sys

from tests.fake_llm.server import FakeLLMServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fake_llm", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on start)")
    args = parser.parse_args(argv)
    server = FakeLLMServer(args.host, args.port)
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
