"""memdesk's version: the installed distribution's, else the ``version`` line of ``pyproject.toml`` beside the code."""

from __future__ import annotations

import re
from functools import cache
from importlib import metadata
from pathlib import Path


@cache
def memdesk_version() -> str:
    """``0.1.0`` (or ``unknown`` when neither the installed metadata nor ``pyproject.toml`` says)."""
    try:
        return metadata.version("memdesk")
    except metadata.PackageNotFoundError:
        pass
    try:
        text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    found = re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE)
    return found.group(1) if found else "unknown"
