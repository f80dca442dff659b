"""``python -m core.cli``: the headless commands without the GUI entry point."""

from core.cli import main

raise SystemExit(main())
