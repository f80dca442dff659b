"""What read-only commands can learn without the settings model: the backend id, and a document's text.

``import pydantic`` and building the settings models cost more than a whole ``memdesk show`` or
keyword search may take. For the built-in backends whose documents are the project's files
(:data:`FILE_BACKENDS`), neither command needs them: the backend id is read from ``config.json``
as plain JSON, and the document is read as the file backend reads it. Anything this module cannot
decide (an unreadable config, another backend) returns ``None`` and the command takes the full path,
which reports the problem as usual.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

#: Backends whose documents are the project's files and whose search is memdesk's derived index.
FILE_BACKENDS = frozenset({"file", "readonly", "qmd"})


def configured_backend(root: Path) -> str | None:
    """The backend id ``config.json`` names (the layout's default when none), read as plain JSON.

    ``None`` when the file cannot be read as a settings object: the full settings code then says why.
    """
    try:
        with open(os.path.join(root, ".fusion", "config.json"), "rb") as fh:
            doc = json.loads(fh.read().decode("utf-8") or "{}")
    except FileNotFoundError:
        doc = {}
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    settings = doc.get("settings") if isinstance(doc.get("settings"), dict) else doc
    backend = settings.get("memoryBackend", settings.get("memoryBackendType"))
    if backend is None:
        from core.layout import detect_layout

        return "qmd" if detect_layout(root) == "layered" else "file"
    return backend if isinstance(backend, str) else None


def file_backend(root: Path) -> str | None:
    """The configured backend when it is one of :data:`FILE_BACKENDS`, else ``None``."""
    backend = configured_backend(root)
    return backend if backend in FILE_BACKENDS else None


def read_document(root: Path, relpath: str, backend_id: str) -> str:
    """Read a document as the file backends do (``""`` when absent); ``MemoryBackendError`` otherwise."""
    from core import fileio
    from core.errors import MemoryBackendError, PathOutsideRootError

    try:
        path = fileio.resolve_in_root(root, relpath)
    except PathOutsideRootError as exc:
        raise MemoryBackendError(str(exc), "INVALID_CONFIG", backend_id, exc) from exc
    return fileio.read_text(path, backend_id) or ""
