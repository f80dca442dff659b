"""Search leaves superseded entries out by default: a result whose line lies in a marked entry is dropped."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.firewall.supersede import superseded_lines
from core.storage import fileio


def without_superseded(root: Path | str, results: list[Any], read: Callable[[str], str] | None = None) -> list[Any]:
    """``results`` (each with ``file`` and ``line_number``) less those inside superseded entries.

    ``read`` (a project-relative path to its text) reads the documents through a backend; by default
    they are read from the files under ``root``."""
    cache: dict[str, list[tuple[int, int]]] = {}
    kept = []
    for result in results:
        rel = getattr(result, "file", None)
        line = getattr(result, "line_number", None)
        if not rel or not line:
            kept.append(result)
            continue
        if rel not in cache:
            try:
                text = (read(rel) if read else fileio.read_text(fileio.resolve_in_root(root, rel))) or ""
            except Exception:  # an unreadable or vanished document: keep its results as they are
                text = ""
            cache[rel] = superseded_lines(text) if "[superseded " in text else []
        if not any(first <= line <= last for first, last in cache[rel]):
            kept.append(result)
    return kept
