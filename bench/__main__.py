"""Run benchmarks: ``python -m bench`` runs them all, ``python -m bench core`` one of them (``search --quick``: no 100k)."""

from __future__ import annotations

import importlib
import sys

SUITES = ("core", "gui", "keystroke", "search", "workspace", "budget", "servers", "postgres", "consolidation", "firewall", "settings", "mirror", "listing")


def main(argv: list[str]) -> int:
    """Run the named suites (all when none is named)."""
    names = [a for a in argv if not a.startswith("-")] or list(SUITES)  # options (--quick) are the suites' own
    for name in names:
        if name not in SUITES:
            print(f"unknown benchmark {name!r}; choose from {', '.join(SUITES)}", file=sys.stderr)
            return 2
    for name in names:
        try:
            mod = importlib.import_module(f"bench.{name}_bench")
        except ModuleNotFoundError as exc:
            print(f"[{name}] not available: {exc}")
            continue
        print(f"== bench {name} ==")
        mod.main()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
