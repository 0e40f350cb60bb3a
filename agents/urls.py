from django.urls import path
from django.views.generic import RedirectView

from agents import views
from agents.approvals import views as approval_views
from agents.chat import views as chat_views

app_name = "agents"

urlpatterns = [
    path("", views.agent_list, name="list"),
    # The list lives at "/"; someone trimming an agent's URL to /agents/ lands there too.
    path("agents/", RedirectView.as_view(pattern_name="agents:list", query_string=True), name="list_redirect"),
    path("agents/new/", views.agent_form, name="create"),
    path("approvals/", approval_views.approvals_inbox, name="approvals"),
    path("agents/<str:agent_id>/", chat_views.agent_chat, name="chat"),
    path("agents/<str:agent_id>/history/", chat_views.chat_history, name="chat_history"),
    path("agents/<str:agent_id>/model/", chat_views.chat_model, name="chat_model"),
    path("agents/<str:agent_id>/memory/", chat_views.chat_memory, name="chat_memory"),
    path("agents/<str:agent_id>/files/", chat_views.chat_upload, name="chat_upload"),
    path("agents/<str:agent_id>/memory/<str:block_id>/", chat_views.chat_block_save, name="chat_block_save"),
    path("agents/<str:agent_id>/archival/", views.agent_archival, name="archival"),
    path(
        "agents/<str:agent_id>/archival/<str:passage_id>/delete/",
        views.agent_archival_delete,
        name="archival_delete",
    ),
    path("agents/<str:agent_id>/edit/", views.agent_form, name="edit"),
    path("agents/<str:agent_id>/delete/", views.agent_delete, name="delete"),
]
