"""What the backend picker shows about a registered backend (:class:`BackendInfo`, re-exported by
:mod:`core.backends.base`), in a module of its own: only the picker and ``memdesk backends`` need it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import BaseModel


@dataclass(frozen=True)
class BackendInfo:
    """What the backend picker shows about a registered backend, without initializing it."""

    id: str
    name: str
    version: str
    description: str
    capabilities: frozenset[str]
    settings_model: type[BaseModel]
    note: str | None = None
