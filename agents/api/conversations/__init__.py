"""``/v1/conversations``: the resource (``resources``) and each thread's turns and history (``threads``)."""

from agents.api.conversations.resources import ConversationsView, ConversationView
from agents.api.conversations.threads import (
    ConversationCancelView,
    ConversationCompactView,
    ConversationForkView,
    ConversationMessagesView,
    ConversationPreviewView,
    ConversationRecompileView,
    ConversationStreamView,
)

__all__ = [
    "ConversationCancelView",
    "ConversationCompactView",
    "ConversationForkView",
    "ConversationMessagesView",
    "ConversationPreviewView",
    "ConversationRecompileView",
    "ConversationStreamView",
    "ConversationView",
    "ConversationsView",
]
