from __future__ import annotations

from django.urls import path

from onboarding import views

app_name = "onboarding"

urlpatterns = [
    path("starter-agent/", views.starter_agent_open, name="starter_agent"),
]
