"""WhiteNoise as async-capable middleware, so a request that is no static file never leaves the event loop.

``WhiteNoiseMiddleware`` is sync only: under ASGI, Django runs it (and every
middleware after it, down to the first async one) in a thread, then hops back to
the event loop for an async view. This subclass answers in the mode of the chain
it sits in. In async mode, a URL that cannot name a static file (outside the
static prefixes) passes straight on; one that may is looked up, and served, in a
thread, as WhiteNoise reads the filesystem to do so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from whitenoise.middleware import WhiteNoiseMiddleware  # type: ignore[import-untyped]

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponseBase


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    sync_capable = True
    async_capable = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.async_mode = iscoroutinefunction(self.get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.async_mode:
            return self.__acall__(request)
        return super().__call__(request)

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        if self._may_be_static(request.path_info):
            static = await sync_to_async(self._static_response)(request)
            if static is not None:
                return static
        response: HttpResponseBase = await self.get_response(request)
        return response

    def _may_be_static(self, url: str) -> bool:
        """Whether ``url`` could name a static file (a cheap test on the prefixes, no filesystem)."""
        if not self.autorefresh:
            return url in self.files
        if self.use_finders and url.startswith(self.static_prefix):
            return True
        return any(url.startswith(prefix) for _root, prefix in self.directories)

    def _static_response(self, request: HttpRequest) -> HttpResponseBase | None:
        url = request.path_info
        static_file = self.find_file(url) if self.autorefresh else self.files.get(url)
        return self.serve(static_file, request) if static_file is not None else None
