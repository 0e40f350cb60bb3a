from django.urls import path

from tools import views

app_name = "tools"

urlpatterns = [
    path("", views.tool_list, name="list"),
    path("new/", views.tool_form, name="create"),
    path("schema-preview/", views.schema_preview, name="schema_preview"),
    path("<str:tool_id>/edit/", views.tool_form, name="edit"),
    path("<str:tool_id>/delete/", views.tool_delete, name="delete"),
]
