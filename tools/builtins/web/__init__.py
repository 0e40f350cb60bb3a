"""``web_search`` and ``fetch_webpage``: Letta's web built-ins, with Letta's names, parameters and answers.

``fetch_webpage`` needs no configuration. It fetches the page itself through the egress
guard (``core.egress.public_addresses``): the host is resolved once, every address must be
public or named in ``WEB_FETCH_ALLOWED_PRIVATE_HOSTS``, and the connection goes to the
address that was checked (the URL names it, the ``Host`` header and TLS name keep the host
name), so a second DNS answer cannot send it elsewhere. Redirects are followed by hand,
each through the same check; environment proxies are ignored for the same reason. The
body is capped (``WEB_FETCH_MAX_BYTES``), and so are the connect, read and total times.
HTML becomes Markdown with trafilatura (what Letta uses: it keeps the main text and drops
navigation and boilerplate); other text comes back as it is; binary content is an error.

``web_search`` asks the search API the operator configures (``WEB_SEARCH_PROVIDER``: Exa as
Letta, Tavily or a self-hosted SearXNG). An agent's tool variable ``EXA_API_KEY`` or
``TAVILY_API_KEY`` overrides the server's, as on Letta. The answer is Letta's JSON; a
blank query and a failed search are answered the way Letta answers them (as results).
"""

from __future__ import annotations

from tools.builtins.base import BuiltinTool
from tools.builtins.web.fetch import FETCH_WEBPAGE
from tools.builtins.web.search import WEB_SEARCH


def web_tools() -> list[BuiltinTool]:
    return [WEB_SEARCH, FETCH_WEBPAGE]
