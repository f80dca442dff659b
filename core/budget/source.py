"""The project's memory documents for the budget report: listed and read through ``core.project.Project``.

Until the project model is in this build, a small stand-in lists the Fusion paths (design §2/§2a) and
reads them with :func:`core.fileio.read_text`; :func:`open_source` picks whichever is available.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

from core import fileio
from core.errors import MemoryBackendError
from core.settings import ProjectSettings, load_settings

__all__ = ["DocumentSource", "open_source"]

_DAILY = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")


class DocumentSource(Protocol):
    """What the budget report needs of a project."""

    settings: ProjectSettings

    def documents(self) -> list[tuple[str, str]]: ...  # (relpath, label)
    def resolve(self, user_path: str | None) -> str: ...
    def read(self, relpath: str) -> str: ...
    def close(self) -> None: ...


class _ProjectSource:
    def __init__(self, project: object) -> None:
        self.project = project
        self.settings: ProjectSettings = project.settings  # type: ignore[attr-defined]

    def documents(self) -> list[tuple[str, str]]:
        return [(d.path, d.label) for d in self.project.documents()]  # type: ignore[attr-defined]

    def resolve(self, user_path: str | None) -> str:
        return self.project.resolve_path(user_path)  # type: ignore[attr-defined]

    def read(self, relpath: str) -> str:
        return self.project.read(relpath)  # type: ignore[attr-defined]

    def close(self) -> None:
        getattr(self.project, "close", lambda: None)()


class _FileSource:
    """Stand-in for the project model: Fusion's paths, read as files (replaced at merge)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.settings = load_settings(root)
        self.layered = (root / ".fusion" / "memory").is_dir()
        self.memory_path = ".fusion/memory/MEMORY.md" if self.layered else ".fusion/memory.md"

    def documents(self) -> list[tuple[str, str]]:
        names: list[tuple[str, str]] = []
        if not self.layered:
            names = [(".fusion/memory.md", "Working memory"), (".fusion/memory-insights.md", "Insights")]
        else:
            bases = [(".fusion/memory", "")] + [
                (f".fusion/agent-memory/{p.name}", f"{p.name}: ")
                for p in sorted((self.root / ".fusion" / "agent-memory").glob("*")) if p.is_dir()]
            for base, prefix in bases:
                names.append((f"{base}/MEMORY.md", f"{prefix}Long-term memory"))
                daily = sorted((p.name for p in (self.root / base).glob("*.md") if _DAILY.match(p.name)),
                               reverse=True)
                names += [(f"{base}/{n}", f"{prefix}Daily notes {n[:-3]}") for n in daily]
                names.append((f"{base}/DREAMS.md", f"{prefix}Dreams"))
            names += [(".fusion/memory/memory-insights.md", "Insights"),
                      (".fusion/memory.md", "Legacy memory.md (not read by Fusion)")]
        return [(rel, label) for rel, label in names if (self.root / rel).is_file()]

    def resolve(self, user_path: str | None) -> str:
        if user_path is None:
            return self.memory_path
        raw = user_path.strip().removeprefix("./")
        known = [rel for rel, _label in self.documents()]
        for cand in (raw, f".fusion/{raw}", f".fusion/memory/{raw}"):
            if cand in known:
                return cand
        raise MemoryBackendError(f"{user_path!r} is not a memory document of this project", "NOT_FOUND", "file")

    def read(self, relpath: str) -> str:
        return fileio.read_text(fileio.resolve_in_root(self.root, relpath)) or ""

    def close(self) -> None:
        return None


def open_source(root: Path | str) -> DocumentSource:
    """The project's documents through the project model when this build has it, else the stand-in."""
    # The sibling file, not an import attempt: an editable install of another checkout can lend its
    # core.project to this one. (At merge this becomes a plain ``Project(root)``.)
    if not (Path(__file__).resolve().parent.parent / "project.py").is_file():
        return _FileSource(Path(root))
    from core.project import Project

    return _ProjectSource(Project(root))
