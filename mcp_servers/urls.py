from django.urls import path

from mcp_servers import views

app_name = "mcp_servers"

urlpatterns = [
    path("", views.server_list, name="list"),
    path("attach/", views.tool_attach, name="attach"),
    path("<str:server_id>/check/", views.server_check, name="check"),
    path("<str:server_id>/delete/", views.server_delete, name="delete"),
]
