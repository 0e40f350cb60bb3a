"""Each list page shows the rows of the current organization only."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.factories import AgentFactory, ToolFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("factory", "list_page"),
    [pytest.param(AgentFactory, "agents:list", id="agents"), pytest.param(ToolFactory, "tools:list", id="tools")],
)
def test_it_lists_only_the_rows_of_the_current_organization(client, cast, factory, list_page):
    factory(organization=cast.org_a, name="research_helper")
    factory(organization=cast.org_b, name="globex_secret")
    client.force_login(cast.bob)

    content = client.get(reverse(list_page)).content.decode()

    assert "research_helper" in content
    assert "globex_secret" not in content
