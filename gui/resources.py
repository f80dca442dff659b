"""The one helper for bundled resources (read through ``importlib.resources``)."""

from __future__ import annotations

import shutil
from contextlib import AbstractContextManager
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path


def resource(name: str) -> Traversable:
    """Return the bundled resource ``name`` (for example ``"preview.css"``)."""
    return resources.files("resources").joinpath(name)


def read_text(name: str) -> str:
    """Return a bundled text resource, ``""`` when it is missing."""
    res = resource(name)
    return res.read_text(encoding="utf-8") if res.is_file() else ""


def sample_project() -> AbstractContextManager[Path]:
    """Context manager yielding a real folder holding the bundled sample project."""
    return resources.as_file(resources.files("resources").joinpath("sample"))


def sample_project_copy(dest_root: Path | None = None) -> Path:
    """Return a writable copy of the sample project (made once under the user data folder).

    The bundled files are never edited in place: an install may be read-only, and the sample must
    stay pristine for the next newcomer.
    """
    if dest_root is None:
        from platformdirs import user_data_dir

        dest_root = Path(user_data_dir("memdesk", appauthor=False))
    dest = dest_root / "sample-project"
    if not (dest / ".fusion" / "memory.md").exists():
        with sample_project() as src:
            shutil.copytree(src, dest, dirs_exist_ok=True)
    return dest
