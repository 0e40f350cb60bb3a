from django.urls import path

from mcp_servers import views

app_name = "mcp_servers"

urlpatterns = [
    path("", views.server_list, name="list"),
    path("attach/", views.tool_attach, name="attach"),
    path("oauth/callback/", views.oauth_callback, name="oauth_callback"),
    path("<str:server_id>/connect/", views.server_connect, name="connect"),
    path("<str:server_id>/check/", views.server_check, name="check"),
    path("<str:server_id>/delete/", views.server_delete, name="delete"),
]
