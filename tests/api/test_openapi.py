"""The OpenAPI document and its docs page."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from agents.api.urls import urlpatterns

pytestmark = pytest.mark.django_db


def test_it_generates_a_valid_schema_without_warnings(tmp_path: Path) -> None:
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "openapi.json"))


def test_it_serves_the_schema_publicly_with_every_letta_path() -> None:
    response = APIClient().get("/v1/openapi.json")

    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    documented = set(schema["paths"])
    routed = {f"/v1/{p.pattern}".replace("<str:", "{").replace(">", "}") for p in urlpatterns if p.name}
    assert routed - {"/v1/openapi.json", "/v1/docs/"} == documented
    assert "/v1/agents/{agent_id}/tools/approval/{tool_name}" in documented
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"


def test_it_serves_a_docs_page_that_needs_no_cdn() -> None:
    response = APIClient().get("/v1/docs/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    assert "cdn.jsdelivr.net" not in page
