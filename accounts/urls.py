from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views

app_name = "accounts"

urlpatterns = [
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("signup/", views.signup, name="signup"),
    path("signup/confirm/<str:token>/", views.signup_confirm, name="signup_confirm"),
    path("organizations/new/", views.organization_create, name="organization_create"),
    path("organizations/switch/", views.organization_switch, name="organization_switch"),
    path("members/", views.member_list, name="members"),
    path("members/<int:pk>/role/", views.member_role, name="member_role"),
    path("members/<int:pk>/remove/", views.member_remove, name="member_remove"),
    path("invites/", views.invite_list, name="invites"),
    path("invites/<int:pk>/revoke/", views.invite_revoke, name="invite_revoke"),
    path("invites/<str:token>/", views.invite_accept, name="invite_accept"),
    path("api-keys/", views.api_key_list, name="api_keys"),
    path("api-keys/<int:pk>/revoke/", views.api_key_revoke, name="api_key_revoke"),
]
