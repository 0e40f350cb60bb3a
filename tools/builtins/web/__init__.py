"""``web_search`` and ``fetch_webpage``: Letta's web built-ins, with Letta's names, parameters and answers.

``fetch_webpage`` (``fetch``) needs no configuration: it fetches the page itself through the
egress guard and turns HTML into Markdown. ``web_search`` (``search``) asks the search API the
operator configures (``WEB_SEARCH_PROVIDER``). Each module says how.
"""

from __future__ import annotations

from tools.builtins.base import BuiltinTool
from tools.builtins.web.fetch import FETCH_WEBPAGE
from tools.builtins.web.search import WEB_SEARCH


def web_tools() -> list[BuiltinTool]:
    return [WEB_SEARCH, FETCH_WEBPAGE]
