"""Model providers: an organization's own (``byok``) and the server's (``base``), and the models they list."""
