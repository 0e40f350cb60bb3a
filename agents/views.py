from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from agents.models import Agent

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse


@login_required
def agent_list(request: HttpRequest) -> HttpResponse:
    agents = Agent.objects.for_org(request.organization)  # type: ignore[attr-defined]
    return render(request, "agents/list.html", {"agents": agents})
