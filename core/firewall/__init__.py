"""The memory firewall (issue 20, design §9): screen every write, hold what needs a person, one inbox.

:mod:`rules` (vocabulary, caps), :mod:`secrets`, :mod:`injection`, :mod:`similarity` (the rule families),
:mod:`engine` (runs them on a write), :mod:`policy` (per writer and rule), :mod:`inbox` (held writes),
:mod:`screen` (the pipeline's screen stage), :mod:`review` (accept/reject), :mod:`scan` (existing memory).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def lazy_screen(root: Path | str) -> Any:
    """The project's firewall screen, built on the first write (a project that only reads never loads the rules)."""
    screen: list[Any] = []

    def call(request: Any) -> Any:
        if not screen:
            from core.firewall.screen import FirewallScreen

            screen.append(FirewallScreen(root))
        return screen[0](request)

    return call
