"""The memory firewall (issue 20, design §9): screen every write, hold what needs a person, one inbox.

:mod:`rules` (vocabulary, caps), :mod:`secrets`, :mod:`injection`, :mod:`similarity` (the rule families),
:mod:`engine` (runs them on a write), :mod:`policy` (per writer and rule), :mod:`inbox` (held writes),
:mod:`screen` (the pipeline's screen stage), :mod:`review` (accept/reject), :mod:`scan` (existing memory).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class LazyScreen:
    """The project's firewall screen, built on the first write (a project that only reads never loads the rules)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._firewall: Any = None

    @property
    def firewall(self) -> Any:
        """The :class:`~core.firewall.screen.FirewallScreen` (built now if it was not yet)."""
        if self._firewall is None:
            from core.firewall.screen import FirewallScreen

            self._firewall = FirewallScreen(self.root)
        return self._firewall

    def __call__(self, request: Any) -> Any:
        return self.firewall(request)


def lazy_screen(root: Path | str) -> LazyScreen:
    """The screen :class:`~core.project.Project` installs: the firewall, loaded on the first write."""
    return LazyScreen(root)


def screen_import(root: Path, path: str, text: str, before: str | None, origin: str) -> None:
    """The firewall's screen on text a backend took in (:mod:`core.firewall.imports`, loaded on the first one)."""
    from core.firewall.imports import screen_import as screen

    screen(root, path, text, before, origin)
