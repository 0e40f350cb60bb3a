from django.urls import path

from folders import views

app_name = "folders"

urlpatterns = [
    path("", views.folder_list, name="list"),
    path("<str:folder_id>/", views.folder_detail, name="detail"),
    path("<str:folder_id>/status/", views.folder_status, name="status"),
    path("<str:folder_id>/files/<str:file_id>/", views.file_preview, name="preview"),
]
