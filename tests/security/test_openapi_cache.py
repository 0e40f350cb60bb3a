"""Issue 14, item 17: ``/v1/openapi.json`` is built once per process, whatever the query string."""

from __future__ import annotations

from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from agents.api.schema import clear_schema_cache


def test_the_openapi_document_is_built_once_and_then_served_from_memory(monkeypatch):
    builds: list[int] = []
    build = SchemaGenerator.get_schema

    def counting_build(self, *args, **kwargs):
        builds.append(1)
        return build(self, *args, **kwargs)

    monkeypatch.setattr(SchemaGenerator, "get_schema", counting_build)
    clear_schema_cache()
    client = APIClient()

    first = client.get("/v1/openapi.json")
    others = [client.get("/v1/openapi.json", {"version": f"v{n}", "lang": "fr"}) for n in range(3)]

    assert first.status_code == 200
    assert all(response.json() == first.json() for response in others)
    assert len(builds) == 1
