"""``python -m core.cli``: the headless commands without the GUI entry point."""

import sys

from core.cli import command_of, main
from core.cli.finish import FAST_EXIT_COMMANDS, finish

code = main()
if command_of(sys.argv[1:]) in FAST_EXIT_COMMANDS:
    finish(code)
raise SystemExit(code)
