"""``core.project``: the seed's name (design §3a), a thin wrapper over :mod:`core.project.model`.

The project model (``Project``, ``open_project``) lives in :mod:`core.project.model`, beside
the operations over it (appending, migrate, reindex, activity, the watcher of outside changes).
Its names load on first use, so importing a module of this package (``core.project.appending``, say)
does not load the model.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.project.model import (
        CONFIG_PATH as CONFIG_PATH,
    )
    from core.project.model import (
        MAX_QUERY as MAX_QUERY,
    )
    from core.project.model import (
        AppendLayer as AppendLayer,
    )
    from core.project.model import (
        AppendOutcome as AppendOutcome,
    )
    from core.project.model import (
        AppendStatus as AppendStatus,
    )
    from core.project.model import (
        Changes as Changes,
    )
    from core.project.model import (
        MemoryDisabledError as MemoryDisabledError,
    )
    from core.project.model import (
        Project as Project,
    )
    from core.project.model import (
        WriteResult as WriteResult,
    )
    from core.project.model import (
        adopted as adopted,
    )
    from core.project.model import (
        forget_project as forget_project,
    )
    from core.project.model import (
        open_project as open_project,
    )

__all__ = [
    "AppendLayer",
    "AppendOutcome",
    "AppendStatus",
    "CONFIG_PATH",
    "Changes",
    "MAX_QUERY",
    "MemoryDisabledError",
    "Project",
    "WriteResult",
    "adopted",
    "forget_project",
    "open_project",
]


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    value = getattr(importlib.import_module("core.project.model"), name)
    globals()[name] = value
    return value
