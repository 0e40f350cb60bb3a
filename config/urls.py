from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("v1/", include("agents.api.urls")),
    path("accounts/", include("accounts.urls")),
    path("accounts/", include("onboarding.urls")),
    path("tools/", include("tools.urls")),
    path("providers/", include("providers.urls")),
    path("", include("agents.urls")),
]
