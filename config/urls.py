from django.contrib import admin
from django.urls import include, path, re_path

from agents.api.views import not_found

urlpatterns = [
    path("admin/", admin.site.urls),
    path("v1/", include("agentfiles.urls")),
    path("v1/", include("agents.api.urls")),
    path("v1/", include("mcp_servers.api_urls")),
    # After every /v1 route: any other /v1 path answers JSON 404, as Letta does.
    re_path(r"^v1(?:/(?P<path>.*))?$", not_found),
    path("accounts/", include("accounts.urls")),
    path("accounts/", include("onboarding.urls")),
    path("tools/", include("tools.urls")),
    path("providers/", include("providers.urls")),
    path("mcp-servers/", include("mcp_servers.urls")),
    path("agents/", include("agentfiles.page_urls")),  # before agents.urls, whose agents/<id>/ would take import/
    path("folders/", include("folders.urls")),
    path("", include("agents.urls")),
]
