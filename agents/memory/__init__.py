"""Core memory blocks, archival passages and the compiled memory section of the system prompt."""
