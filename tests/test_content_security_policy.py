"""Every page carries the Content-Security-Policy: nothing inline, the WebSocket origin, no framing."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def directives(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {name: values for name, *values in (part.split() for part in header.split(";") if part.strip())}


@pytest.mark.parametrize("url", ["/accounts/login/", "/", "/tools/", "/admin/", "/v1/docs/", "/no/such/page/"])
def test_every_page_forbids_inline_code_and_framing(client, cast, url):
    client.force_login(cast.alice)

    policy = directives(client.get(url))

    assert policy["script-src"][0] == "'self'" and "'unsafe-inline'" not in policy["script-src"]
    assert "'unsafe-inline'" not in policy["style-src"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["connect-src"] == ["'self'", "ws://testserver", "wss://testserver"]


def test_the_api_docs_inline_script_runs_under_a_nonce_of_its_own(client):
    response = client.get(reverse("api:docs"))

    nonce = next(v for v in directives(response)["script-src"] if v.startswith("'nonce-"))[7:-1]
    assert f'<script nonce="{nonce}">' in response.content.decode()


def test_pages_of_the_product_carry_no_inline_script_or_style(client, cast):
    client.force_login(cast.alice)

    for url in ["/accounts/login/", "/", "/tools/", "/tools/new/", "/agents/new/"]:
        content = client.get(url).content.decode()
        assert "<style" not in content and " style=" not in content, url
        assert "<script>" not in content and '<script type="module">' not in content, url
