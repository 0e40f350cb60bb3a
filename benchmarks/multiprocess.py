"""N web processes and M Celery workers behind nginx on one machine, on Postgres and Redis.

Starts the fake Anthropic model (its own process), a fresh Postgres database beside
``--postgres`` (dropped at the end), ``--web`` Daphne processes on ports of their own,
``--workers`` Celery workers and a real nginx in front (``deploy/nginx/agentserver.conf``,
the site docker-compose.yml serves, with an upstream of local ports), then prints the
proxy's base URL and an API key. Given a command after ``--``, it runs it with
``{base_url}`` and ``{api_key}`` filled in and stops everything when it ends; otherwise
it serves until Ctrl-C. Run from the project folder::

    .venv/bin/python benchmarks/multiprocess.py --web 2 --workers 1 \\
        --postgres postgres://postgres@127.0.0.1:5432/agentserver --redis redis://127.0.0.1:6379/3 -- \\
        .venv/bin/python benchmarks/bench_sdk_turns.py --base-url {base_url} --api-key {api_key} --only concurrent

Needs ``nginx`` on the PATH (Debian: ``apt-get install nginx-light``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django

django.setup()

import httpx
from harness import fake_model

from tests.crossprocess.stack import ProcessStack, process_stack
from tests.support.databases import scratch_database
from tests.support.live_server import free_port

if TYPE_CHECKING:
    from collections.abc import Iterator

SITE = ROOT / "deploy" / "nginx" / "agentserver.conf"
NGINX_MAIN = """\
worker_processes {workers};
pid {folder}/nginx.pid;
error_log {folder}/nginx-error.log warn;
daemon off;

events {{
    worker_connections 4096;
}}

http {{
    access_log off;
    client_body_temp_path {folder}/client_body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;

    upstream agentserver_web {{
{servers}
        keepalive 64;
    }}

{site}
}}
"""


def nginx_config(folder: Path, web_urls: list[str], port: int, workers: int) -> Path:
    """The repository's site, listening on ``port``, with the web processes as its upstream."""
    site = SITE.read_text().replace("listen 80;", f"listen 127.0.0.1:{port};")
    servers = "\n".join(f"        server {url.removeprefix('http://')};" for url in web_urls)
    path = folder / "nginx.conf"
    path.write_text(NGINX_MAIN.format(folder=folder, servers=servers, site=site, workers=workers))
    return path


@contextlib.contextmanager
def nginx(folder: Path, web_urls: list[str], *, workers: int) -> Iterator[str]:
    """nginx in front of ``web_urls``; its base URL once it answers."""
    binary = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    if binary is None:
        raise SystemExit("nginx is not installed (Debian: apt-get install nginx-light)")
    port = free_port()
    config = nginx_config(folder, web_urls, port, workers)
    process = subprocess.Popen([binary, "-c", str(config), "-p", str(folder), "-e", str(folder / "nginx-error.log")])
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/v1/health/", timeout=2).status_code == 200:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nginx did not start: {(folder / 'nginx-error.log').read_text(errors='replace')}")
            time.sleep(0.2)
        yield url
    finally:
        process.send_signal(signal.SIGQUIT)  # graceful stop
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@contextlib.contextmanager
def started_stack(
    folder: Path, *, postgres: str, redis: str, web: int, workers: int, extra_env: dict[str, str]
) -> Iterator[ProcessStack]:
    """A fresh database beside ``postgres`` and ``web`` + ``workers`` processes on it."""
    os.environ["DATABASE_URL"] = postgres  # scratch_database creates its database beside this one
    with (
        scratch_database(folder) as database_url,
        process_stack(folder, database_url=database_url, redis_url=redis, extra_env=extra_env) as stack,
    ):
        stack.start(
            webs=tuple(f"web-{index}" for index in range(1, web + 1)),
            workers=tuple(f"worker-{index}" for index in range(1, workers + 1)),
        )
        yield stack


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", required=True, help="a Postgres URL; a fresh database is created beside it")
    parser.add_argument("--redis", required=True, help="a Redis URL (channel layer and Celery broker)")
    parser.add_argument("--web", type=int, default=2, help="Daphne processes")
    parser.add_argument("--workers", type=int, default=1, help="Celery workers (one run at a time each)")
    parser.add_argument("--nginx-workers", type=int, default=1)
    parser.add_argument("--server-env", action="append", default=[], help="KEY=VALUE for every process")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- a command run with {base_url} and {api_key}")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    with fake_model() as model_url, tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        env = {"ANTHROPIC_BASE_URL": model_url, "ANTHROPIC_API_KEY": "sk-ant-bench", "LOG_LEVEL": "WARNING"}
        env |= dict(item.split("=", 1) for item in args.server_env)
        with (
            started_stack(
                folder, postgres=args.postgres, redis=args.redis, web=args.web, workers=args.workers, extra_env=env
            ) as stack,
            nginx(folder, [web.url for web in stack.webs.values()], workers=args.nginx_workers) as base_url,
        ):
            load = " ".join(f"{value:.2f}" for value in os.getloadavg())
            print(f"{args.web} web process(es), {args.workers} worker(s) behind nginx at {base_url}; load {load}")
            print(f"API key: {stack.api_key}", flush=True)
            if command:
                filled = [part.format(base_url=base_url, api_key=stack.api_key) for part in command]
                sys.exit(subprocess.run(filled, cwd=ROOT, check=False).returncode)
            with contextlib.suppress(KeyboardInterrupt):
                signal.pause()


if __name__ == "__main__":
    main()
