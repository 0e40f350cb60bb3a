"""ASGI entry point: HTTP through Django, WebSockets through Channels."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from agents.dispatch import bind_server_loop  # noqa: E402
from agents.routing import websocket_urlpatterns  # noqa: E402
from tools.sandbox.selection import announce_sandbox  # noqa: E402

announce_sandbox()

application = bind_server_loop(
    ProtocolTypeRouter(
        {
            "http": django_asgi_app,
            "websocket": AllowedHostsOriginValidator(
                # django's path() types its patterns for views; channels' stubs want an ASGI-callback subtype.
                AuthMiddlewareStack(URLRouter(websocket_urlpatterns))  # type: ignore[arg-type]
            ),
        }
    )
)
