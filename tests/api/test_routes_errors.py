"""Errors Letta clients can read: unknown /v1 paths and methods answer FastAPI's JSON, fixed words are
never taken for ids, and health names the Letta version whose surface /v1 serves."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from agents.api.views import SERVER_VERSION

pytestmark = pytest.mark.django_db

NOT_FOUND = {"detail": "Not Found"}
NOT_ALLOWED = {"detail": "Method Not Allowed"}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/v1/groups/"),
        ("get", "/v1/nope"),
        ("post", "/v1/conversations-that-do-not-exist/"),
        ("delete", "/v1/folders/folder-1/files/file-1/extra"),
        ("get", "/v1/agents/agent-1/no-such-thing"),
        ("patch", "/v1/tools/tool-1/run/extra"),
        ("get", "/v1"),
        ("put", "/v1/"),
    ],
)
def test_an_unknown_v1_path_answers_json_404_with_or_without_a_key(
    alice_api: APIClient, method: str, path: str
) -> None:
    for client in (alice_api, APIClient()):
        response = getattr(client, method)(path, {}, format="json")

        assert response.status_code == 404
        assert response["Content-Type"] == "application/json"
        assert response.json() == NOT_FOUND


def test_a_path_outside_v1_keeps_the_sites_html_page(client) -> None:
    response = client.get("/no-such-page/")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("patch", "/v1/health/"),
        ("put", "/v1/agents/"),
        ("delete", "/v1/tools/add-base-tools"),
        ("post", "/v1/agents/count"),
        ("get", "/v1/tools/search"),
        ("post", "/v1/runs/active"),
    ],
)
def test_a_known_path_with_a_method_it_does_not_serve_answers_json_405(
    alice_api: APIClient, method: str, path: str
) -> None:
    response = getattr(alice_api, method)(path, {}, format="json")

    assert response.status_code == 405
    assert response.json() == NOT_ALLOWED
    assert response["Allow"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/v1/agents/search"),
        ("post", "/v1/agents/search"),
    ],
)
def test_lettas_fixed_words_this_server_does_not_serve_are_not_taken_for_ids(
    alice_api: APIClient, method: str, path: str
) -> None:
    response = getattr(alice_api, method)(path, {}, format="json")

    assert (response.status_code, response.json()) == (404, NOT_FOUND)


def test_count_and_search_are_not_taken_for_ids(alice_api: APIClient) -> None:
    assert alice_api.get("/v1/agents/count").json() == 0
    assert alice_api.get("/v1/tools/count").json() == 0
    assert alice_api.post("/v1/tools/search", {}, format="json").json() == []


def test_health_names_the_letta_version_whose_surface_is_served() -> None:
    for path in ("/v1/health/", "/v1/health"):
        response = APIClient().get(path)

        assert response.status_code == 200
        assert response.json() == {"version": "0.16.8", "status": "ok"}
    assert SERVER_VERSION == "0.16.8"


def test_the_readme_says_which_letta_version_is_matched() -> None:
    readme = (Path(settings.BASE_DIR) / "README.md").read_text()

    assert f"Letta {SERVER_VERSION}" in readme
