"""Issue 24: our server and Letta 0.13.0 side by side, on the same machine, in one run.

Each side gets the same scenarios of ``bench_sdk_turns.py`` through ``letta-client``
0.1.324 (blocking ``client.agents.messages.create``), each against a fake Anthropic
model of its own (a separate process, zero latency, over HTTP), in alternating rounds:
ours, Letta, ours, Letta, ... A round starts its side's stack on a fresh database and
stops it at the end, so the side not measured takes no CPU.

- ours: ``bench_sdk_turns.py``'s ``--stack postgres`` (Postgres ``--postgres``, Redis
  ``--redis``, one Daphne process, one Celery worker);
- Letta: ``letta server`` from ``--letta-venv`` (one uvicorn process, which runs the agent
  loop itself: Letta's server has no separate worker), on a Postgres 16 with pgvector
  that the ``pgserver`` package of that virtualenv ships, started here on
  ``--letta-pg-port`` (its own data folder under ``--workdir``), and a Redis of its own
  on ``--letta-redis-port`` (Letta takes a Redis host and port but no database number,
  so it gets a ``redis-server`` of its own rather than database 0 of the shared one).
  Letta's wheel ships no Alembic migrations: the schema is its ORM's
  ``metadata.create_all`` plus what the migrations add that the ORM only declares
  (``CREATE EXTENSION vector``; the sequence behind ``messages.sequence_id``).

Letta's processes run in a mount namespace of their own (``unshare``, as root) whose
``/etc/resolv.conf`` names a stub on 127.0.0.1:53 that refuses every name and counts it:
nothing Letta does can reach past loopback, and the names it asked for are printed at
the end (none, with the pins of the README). A proxy would do the same without a
namespace but costs Letta two more TLS contexts for each ``httpx`` client it makes (it
makes one for each model call), so it is not used.

Prepare the Letta virtualenv as ``benchmarks/README.md`` says, then, from the project::

    .venv/bin/python benchmarks/bench_vs_letta.py --letta-venv /work/letta-bench/venv \\
        --rounds 2 --turns 300 --tool-turns 60 --agents 8,32 --seconds 10

``--profile-letta FILE`` adds, after the rounds, one more Letta stack whose text turns are
recorded with py-spy, and prints ``flame_summary.py``'s tables of it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from bench_sdk_turns import MODEL, Target, own_stack, run_scenarios
from harness import ROOT, fake_model, load, percentile

if TYPE_CHECKING:
    from collections.abc import Iterator

LETTA_MODEL = MODEL.split("/", 1)[1]
# Run with the Letta virtualenv's Python: the tables of Letta's ORM, and what its migrations add.
LETTA_SCHEMA = """
import sqlalchemy as sa
import letta.orm  # registers every table
from letta.orm.base import Base
from letta.settings import settings

engine = sa.create_engine(settings.letta_pg_uri.replace("postgresql://", "postgresql+psycopg2://", 1))
with engine.begin() as conn:
    conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS vector"))
Base.metadata.create_all(engine)
with engine.begin() as conn:
    conn.execute(sa.text("CREATE SEQUENCE IF NOT EXISTS messages_sequence_id_seq OWNED BY messages.sequence_id"))
    conn.execute(sa.text(
        "ALTER TABLE messages ALTER COLUMN sequence_id SET DEFAULT nextval('messages_sequence_id_seq')"
    ))
print(len(Base.metadata.tables))
"""
PGSERVER_BIN = "import pgserver, pathlib; print(pathlib.Path(pgserver.__file__).parent / 'pginstall' / 'bin')"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(process: subprocess.Popen[Any], first: int = signal.SIGTERM, timeout: float = 20) -> None:
    """Ask ``process`` to end, then kill it if it has not after ``timeout`` seconds."""
    if process.poll() is not None:
        return
    process.send_signal(first)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def as_postgres_user(command: list[str]) -> list[str]:
    """Postgres refuses to run as root: as root, run ``command`` as the ``postgres`` user."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@contextlib.contextmanager
def pgvector_postgres(venv: Path, folder: Path, port: int) -> Iterator[tuple[Path, str]]:
    """A Postgres 16 with pgvector from the ``pgserver`` wheel, on 127.0.0.1:``port``; its bin folder and URL."""
    python = str(venv / "bin" / "python")
    bin_dir = Path(
        subprocess.run([python, "-c", PGSERVER_BIN], check=True, capture_output=True, text=True).stdout.strip()
    )
    data = folder / "pgdata"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    if os.geteuid() == 0:
        shutil.chown(data, "postgres", "postgres")
    subprocess.run(
        as_postgres_user([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"]),
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c max_connections=200"
    ctl = [str(bin_dir / "pg_ctl"), "-D", str(data)]
    subprocess.run(
        as_postgres_user([*ctl, "-o", options, "-l", str(data / "server.log"), "-w", "start"]),
        check=True,
        capture_output=True,
    )
    try:
        yield bin_dir, f"postgresql://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run(as_postgres_user([*ctl, "-m", "fast", "-w", "stop"]), check=False, capture_output=True)


@contextlib.contextmanager
def own_redis(folder: Path, port: int) -> Iterator[None]:
    """``redis-server`` on 127.0.0.1:``port``, in memory only."""
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(folder)],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.1)
        yield
    finally:
        stop(process)


class DnsTrap:
    """A name server on 127.0.0.1:53 (UDP) for Letta's processes: it logs every name asked and refuses it.

    Letta runs in a mount namespace of its own whose ``/etc/resolv.conf`` names only this
    server, so no host name resolves there: whatever would leave the machine (telemetry,
    downloads) fails at once, and is counted. Everything Letta needs is an address on loopback.
    """

    def __init__(self) -> None:
        self.names: list[str] = []
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 53))
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                query, address = self._socket.recvfrom(512)
            except OSError:
                return
            name, position = [], 12
            while position < len(query) and query[position]:
                length = query[position]
                name.append(query[position + 1 : position + 1 + length].decode(errors="replace"))
                position += 1 + length
            self.names.append(".".join(name))
            if len(self.names) <= 20:
                print(f"  Letta asked for the address of {'.'.join(name)!r} (refused)", flush=True)
            # The same id, QR set, the question echoed, RCODE 5 (refused).
            answer = query[:2] + bytes([0x81, 0x85]) + query[4:6] + b"\0\0\0\0\0\0" + query[12 : position + 5]
            with contextlib.suppress(OSError):
                self._socket.sendto(answer, address)

    def close(self) -> None:
        self._socket.close()


def without_names(command: list[str], resolv_conf: Path) -> list[str]:
    """``command`` in a mount namespace of its own whose ``/etc/resolv.conf`` is ``resolv_conf``."""
    script = 'mount --bind "$0" /etc/resolv.conf && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, str(resolv_conf), *command]


def wait_healthy(url: str, process: subprocess.Popen[Any], log: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/v1/health/", timeout=2).status_code == 200:
                return
        if process.poll() is not None or time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise RuntimeError(f"Letta did not start:\n{tail}")
        time.sleep(0.5)


@contextlib.contextmanager
def letta_stack(args: argparse.Namespace, services: dict[str, Any], name: str) -> Iterator[Target]:
    """A fresh database on the pgvector Postgres, the fake model, and ``letta server``; its target."""
    import psycopg

    venv: Path = args.letta_venv
    admin = f"{services['postgres']}/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    home = args.workdir / "home"
    home.mkdir(exist_ok=True)
    resolv_conf: Path = services["resolv_conf"]
    try:
        with fake_model("--anthropic-model", LETTA_MODEL) as model_url:
            env = {
                **os.environ,
                "HOME": str(home),
                "LETTA_PG_URI": f"{services['postgres']}/{name}",
                "LETTA_REDIS_HOST": "127.0.0.1",
                "LETTA_REDIS_PORT": str(args.letta_redis_port),
                "ANTHROPIC_BASE_URL": model_url,
                "ANTHROPIC_API_KEY": "sk-ant-bench",
                # The embedding handle resolves from Letta's own list for OpenAI; nothing is embedded in a turn.
                "OPENAI_API_KEY": "sk-bench",
                "LETTA_LOGGING_LOG_LEVEL": "WARNING",
                **dict(item.split("=", 1) for item in args.letta_env),
            }
            subprocess.run(
                [str(venv / "bin" / "python"), "-c", LETTA_SCHEMA],
                env=env,
                check=True,
                capture_output=True,
                timeout=300,
            )
            port = args.letta_port or free_port()
            log = args.workdir / f"{name}.log"
            with log.open("w") as output:
                process = subprocess.Popen(
                    without_names(
                        [str(venv / "bin" / "letta"), "server", "--host", "127.0.0.1", "--port", str(port)], resolv_conf
                    ),
                    env=env,
                    cwd=args.workdir,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                )
            try:
                url = f"http://127.0.0.1:{port}"
                wait_healthy(url, process, log, args.letta_start_seconds)
                yield Target(
                    url, "letta-has-no-auth", process.pid, "Letta 0.13.0: pgvector Postgres, Redis, one uvicorn"
                )
            finally:
                stop(process, signal.SIGINT)
    finally:
        with contextlib.suppress(Exception), psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def summary(results: dict[str, Any]) -> dict[str, Any]:
    """The figures of the table from one side's round."""
    text = [value * 1000 for value in results.get("text", [])]
    tool = [value * 1000 for value in results.get("tool", [])]
    row: dict[str, Any] = {
        "text_n": len(text),
        "text_p50": statistics.median(text) if text else float("nan"),
        "text_p99": percentile(text, 0.99) if text else float("nan"),
        "tool_n": len(tool),
        "tool_p50": statistics.median(tool) if tool else float("nan"),
        "text_load": results.get("text_load", ""),
        "tool_load": results.get("tool_load", ""),
    }
    for count, figures in results.get("agents", {}).items():
        row[f"agents_{count}"] = figures
    return row


def print_tables(rounds: list[tuple[str, int, dict[str, Any]]], agent_counts: list[int]) -> None:
    columns = [f"{side} r{number}" for side, number, _ in rounds]
    rows = [row for _, _, row in rounds]
    print("\n| measure | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    print("| load at the text turns | " + " | ".join(row["text_load"] for row in rows) + " |")
    print(
        "| text turn p50 / p99 | "
        + " | ".join(f"{row['text_p50']:.1f} / {row['text_p99']:.1f} ms (n={row['text_n']})" for row in rows)
        + " |"
    )
    print("| load at the tool turns | " + " | ".join(row["tool_load"] for row in rows) + " |")
    print("| tool turn p50 | " + " | ".join(f"{row['tool_p50']:.1f} ms (n={row['tool_n']})" for row in rows) + " |")
    for count in agent_counts:
        cells = []
        for row in rows:
            figures = row.get(f"agents_{count}")
            cells.append(
                f"{figures['turns_per_second']:.1f} turns/s, {figures['errors']} errors (load {figures['load']})"
                if figures
                else "-"
            )
        print(f"| {count} agents at once | " + " | ".join(cells) + " |")

    ours = [row for side, _, row in rounds if side == "ours"]
    letta = [row for side, _, row in rounds if side == "Letta"]
    measures = [("text p50", "text_p50"), ("text p99", "text_p99"), ("tool p50", "tool_p50")]
    measures += [(f"{count}-agent turns/s", f"agents_{count}") for count in agent_counts]

    def value(row: dict[str, Any], key: str) -> float:
        figure = row.get(key)
        return float(figure["turns_per_second"]) if isinstance(figure, dict) else float(figure or "nan")

    pairs = list(zip(ours, letta, strict=False))
    print("\n| Letta ÷ ours | " + " | ".join(f"round {index}" for index in range(1, len(pairs) + 1)) + " | median |")
    print("|---|" + "---|" * (len(pairs) + 1))
    for label, key in measures:
        ratios = [value(theirs, key) / value(mine, key) for mine, theirs in pairs]
        cells = [f"{ratio:.2f}" for ratio in ratios]
        print(f"| {label} | " + " | ".join(cells) + f" | {statistics.median(ratios):.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--letta-venv", type=Path, required=True, help="a virtualenv with letta 0.13.0 and pgserver")
    parser.add_argument("--workdir", type=Path, help="Letta's Postgres data, home and logs (default: a temporary one)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of each side, alternating, ours first")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/agentserver_bench")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/11")
    parser.add_argument("--letta-pg-port", type=int, default=5433)
    parser.add_argument("--letta-redis-port", type=int, default=6380)
    parser.add_argument("--letta-port", type=int, default=0, help="Letta's HTTP port (default: a free one)")
    parser.add_argument("--letta-start-seconds", type=float, default=180.0)
    parser.add_argument("--letta-env", action="append", default=[], help="KEY=VALUE for Letta's server")
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--tool-turns", type=int, default=60)
    parser.add_argument("--agents", default="8,32")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each concurrency row")
    parser.add_argument("--max-seconds", type=float, default=900.0, help="time bound of each sequential scenario")
    parser.add_argument("--only", default="text,tool,concurrent")
    parser.add_argument("--profile-letta", help="after the rounds, record Letta's text turns into this raw file")
    parser.add_argument("--profile-turns", type=int, default=100)
    parser.add_argument("--json", help="also write every round's figures here")
    args = parser.parse_args()
    args.letta_venv = args.letta_venv.resolve()
    # What bench_sdk_turns.py's own_stack and run_scenarios read.
    args.stack, args.server_env, args.profile = "postgres", [], None

    # SIGTERM (and SIGHUP) unwind like Ctrl-C, so every stack is stopped on the way out.
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGHUP, interrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started in the background, SIGINT ignored

    rounds: list[tuple[str, int, dict[str, Any]]] = []
    raw: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        if args.workdir is None:
            args.workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-vs-letta-")))
            os.chmod(args.workdir, 0o755)  # the postgres user reaches its data folder
        args.workdir = args.workdir.resolve()
        args.workdir.mkdir(parents=True, exist_ok=True)
        print(f"Starting Letta's Postgres (pgvector) and Redis under {args.workdir}; load {load()}", flush=True)
        _, postgres = stack.enter_context(pgvector_postgres(args.letta_venv, args.workdir, args.letta_pg_port))
        stack.enter_context(own_redis(args.workdir, args.letta_redis_port))
        dns = DnsTrap()
        stack.callback(dns.close)
        resolv_conf = args.workdir / "resolv.conf"
        resolv_conf.write_text("nameserver 127.0.0.1\noptions attempts:1 timeout:1\n")
        services = {"postgres": postgres, "resolv_conf": resolv_conf}

        for number in range(1, args.rounds + 1):
            print(f"\n=== round {number}, ours (load {load()}) ===", flush=True)
            with own_stack(args) as target:
                results = run_scenarios(target, args)
            rounds.append(("ours", number, summary(results)))
            raw.append({"side": "ours", "round": number, **results})
            print(f"\n=== round {number}, Letta (load {load()}) ===", flush=True)
            with letta_stack(args, services, f"letta_bench_r{number}") as target:
                results = run_scenarios(target, args)
            rounds.append(("Letta", number, summary(results)))
            raw.append({"side": "Letta", "round": number, **results})

        agent_counts = [int(value) for value in args.agents.split(",")] if "concurrent" in args.only else []
        print_tables(rounds, agent_counts)
        if args.json:
            Path(args.json).write_text(json.dumps(raw, indent=1, default=str))

        if args.profile_letta:
            print(f"\n=== Letta's text turns under py-spy ({args.profile_turns} turns; load {load()}) ===", flush=True)
            profile_args = argparse.Namespace(**{**vars(args), "only": "text", "turns": args.profile_turns})
            profile_args.profile = str(Path(args.profile_letta).resolve())
            with letta_stack(args, services, "letta_bench_profile") as target:
                run_scenarios(target, profile_args)
            subprocess.run(
                [sys.executable, str(ROOT / "benchmarks" / "flame_summary.py"), profile_args.profile, "--top", "15"],
                check=False,
            )
        print(f"\nNames Letta asked for (none resolved): {len(dns.names)} {sorted(set(dns.names))}; load {load()}")


if __name__ == "__main__":
    main()
