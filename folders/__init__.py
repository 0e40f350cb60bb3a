"""Folders and files (Letta's filesystem): documents an organization uploads, parses, chunks and embeds,
attached to agents that open, grep and search them."""
