"""The deployment files describe the topology of the README: web replicas behind nginx, workers, one beat.

Docker is not needed: the compose file is loaded as YAML and the proxy configuration
read as text (``benchmarks/multiprocess.py`` runs the same nginx site for real).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent


def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_the_compose_file_runs_web_replicas_behind_the_proxy_with_workers_and_one_beat():
    services = compose()["services"]

    assert set(services) == {"postgres", "redis", "migrate", "web", "worker", "beat", "proxy"}
    assert "ports" not in services["web"]  # replicas cannot share a host port; the proxy publishes one
    assert [port.split(":")[-1] for port in services["proxy"]["ports"]] == ["80"]
    assert services["proxy"]["image"].startswith("nginx:")
    assert services["web"]["command"][2] == "daphne"
    assert services["worker"]["command"][2:6] == ["celery", "-A", "config", "worker"]
    assert services["beat"]["command"][2:6] == ["celery", "-A", "config", "beat"]


def test_every_app_service_shares_one_postgres_and_one_redis():
    services = compose()["services"]

    for name in ("migrate", "web", "worker", "beat"):
        env = services[name]["environment"]
        assert env["DATABASE_URL"].endswith("@postgres:5432/agentserver"), name
        assert env["REDIS_URL"] == "redis://redis:6379/0", name


def test_the_compose_postgres_ships_pgvector():
    assert compose()["services"]["postgres"]["image"].startswith("pgvector/pgvector:pg")


def test_the_proxy_mounts_the_nginx_files_of_the_repository():
    volumes = compose()["services"]["proxy"]["volumes"]

    for volume in volumes:
        source = volume.split(":")[0]
        assert (ROOT / source).is_file(), source


def test_the_proxy_passes_websocket_upgrades_and_does_not_buffer_streams():
    site = (ROOT / "deploy/nginx/agentserver.conf").read_text()
    main = (ROOT / "deploy/nginx/nginx.conf").read_text()

    assert "proxy_set_header Upgrade $http_upgrade;" in site
    assert "proxy_set_header Connection $connection_upgrade;" in site
    assert "proxy_http_version 1.1;" in site
    assert "proxy_buffering off;" in site
    assert "server web:8000 resolve;" in main
