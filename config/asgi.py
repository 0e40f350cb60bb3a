"""ASGI entry point: HTTP through Django, WebSockets through Channels.

Once everything is imported and set up, ``gc.freeze()`` moves the objects alive then
(Django's, the SDKs' and pydantic's: about 360,000) out of the collector's reach, so
a full collection walks only what requests create: its pause fell from hundreds of
milliseconds to a few (``benchmarks/gc_probe.py``, ``benchmarks/PROFILE.md``). Between
requests, ``CollectWhenIdle`` collects what they left (``config/idle_collection.py``).
"""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.layers import get_channel_layer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.urls import get_resolver  # noqa: E402

from agents.maintenance import in_process_upkeep, maintain_periodically  # noqa: E402
from agents.routing import websocket_urlpatterns  # noqa: E402
from agents.runs.dispatch import bind_server_loop  # noqa: E402
from config.idle_collection import CollectWhenIdle  # noqa: E402
from providers.catalog import load_catalog  # noqa: E402
from tools.sandbox.selection import announce_sandbox  # noqa: E402

announce_sandbox()

application = bind_server_loop(
    ProtocolTypeRouter(
        {
            "http": CollectWhenIdle(django_asgi_app),
            "websocket": AllowedHostsOriginValidator(
                # django's path() types its patterns for views; channels' stubs want an ASGI-callback subtype.
                AuthMiddlewareStack(URLRouter(websocket_urlpatterns))  # type: ignore[arg-type]
            ),
        }
    ),
    on_start=maintain_periodically if in_process_upkeep() else None,
)

# Import the views (and what they import), build the channel layer (its backend's imports
# take about 200 ms) and read the models catalogue (20,000 objects, 60 ms) now rather than at
# the first request, then freeze: nothing that startup created is garbage, so no collection
# should walk it again.
get_resolver().url_patterns  # noqa: B018
get_channel_layer()
load_catalog()
gc.collect()
gc.freeze()
# A turn makes tens of thousands of short-lived objects. At Python's default threshold (700)
# the young generation is collected many times a turn, and with so little left unfrozen a full
# collection follows every few turns; a larger first threshold makes all of them rarer.
gc.set_threshold(*(int(part) for part in os.environ.get("GC_THRESHOLD", "50000,20,10").split(",")))
