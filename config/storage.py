"""The storage of uploaded files' originals (``STORAGES["folders"]``), from the environment.

Local files under ``FOLDERS_STORAGE_ROOT`` by default. Any Django storage backend by
``FOLDERS_STORAGE_BACKEND`` with its options as JSON in ``FOLDERS_STORAGE_OPTIONS``; e.g. an
S3-compatible bucket through django-storages (``pip install "django-storages[s3]"``)::

    FOLDERS_STORAGE_BACKEND=storages.backends.s3.S3Storage
    FOLDERS_STORAGE_OPTIONS='{"bucket_name": "agent-files", "endpoint_url": "https://s3.example.com",
                              "location": "folders", "default_acl": "private", "querystring_auth": true}'

(credentials from ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, which boto3 reads itself). Originals
are only opened, saved and deleted through the storage API, never served by URL.
"""

from __future__ import annotations

import json
from typing import Any

LOCAL_BACKEND = "django.core.files.storage.FileSystemStorage"


def folders_storage(*, backend: str, root: str, options: str) -> dict[str, Any]:
    """``STORAGES["folders"]``: ``options`` (JSON, may be empty) are the backend's; the local backend
    defaults its ``location`` to ``root``."""
    parsed = json.loads(options) if options.strip() else {}
    if not isinstance(parsed, dict):
        raise ValueError("FOLDERS_STORAGE_OPTIONS must be a JSON object")
    if backend == LOCAL_BACKEND:
        parsed.setdefault("location", root)
    return {"BACKEND": backend, "OPTIONS": parsed}
