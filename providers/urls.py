from django.urls import path

from providers import views

app_name = "providers"

urlpatterns = [
    path("", views.provider_list, name="list"),
    path("<str:provider_id>/check/", views.provider_check, name="check"),
    path("<str:provider_id>/refresh/", views.provider_refresh, name="refresh"),
    path("<str:provider_id>/delete/", views.provider_delete, name="delete"),
]
