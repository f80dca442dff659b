"""The ``memdesk`` command: the desktop app, or a headless subcommand handed to :mod:`core.cli`.

``memdesk [PATH] [--screenshot FILE.png] [--view NAME] [--size WxH]`` opens ``PATH`` (with no path,
a writable copy of the bundled sample project). ``memdesk show|write|append|…`` runs without Qt.
PySide6 is imported only once the GUI is really wanted, so headless commands start fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HEADLESS_COMMANDS = frozenset({
    "show", "write", "append", "search", "settings", "backends", "extract", "proposals", "prune",
    "audit", "history", "reindex", "run-scheduled", "providers", "files", "migrate", "budget",
    "serve", "mcp", "tokens", "connections", "backend",
})
VIEW_NAMES = ("editor", "settings", "backends", "insights", "prune", "audit", "search", "history")


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 1280x800, not {text!r}") from None
    if not (200 <= width <= 8000 and 200 <= height <= 8000):
        raise argparse.ArgumentTypeError(f"size {text} is out of range (200..8000 per side)")
    return width, height


def build_parser() -> argparse.ArgumentParser:
    """The GUI's command line (headless subcommands have their own, in ``core.cli``)."""
    parser = argparse.ArgumentParser(
        prog="memdesk",
        description="Edit and manage the memory of AI coding agents. Headless commands: "
        + ", ".join(sorted(HEADLESS_COMMANDS)) + " (memdesk COMMAND --help).",
    )
    parser.add_argument("path", nargs="?", help="project folder to open (default: the bundled sample)")
    parser.add_argument("--screenshot", metavar="FILE.png", type=Path,
                        help="render the window offscreen to this PNG and exit")
    parser.add_argument("--view", choices=VIEW_NAMES, default="editor", help="tab to show (default: editor)")
    parser.add_argument("--size", type=_size, default=(1280, 800), metavar="WxH",
                        help="window size (default: 1280x800)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run memdesk; return the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in HEADLESS_COMMANDS:
        from core.cli import main as cli_main

        return cli_main(args)
    ns = build_parser().parse_args(args)
    if ns.path is not None and not Path(ns.path).is_dir():
        what = "does not exist" if not Path(ns.path).exists() else "is not a folder"
        print(f"memdesk: {ns.path} {what}; give a project folder, or no path to open the sample project",
              file=sys.stderr)
        return 2
    if ns.screenshot is not None and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    return _run_gui(ns)


def _project(path: str | None) -> Path:
    if path is not None:
        return Path(path)
    from gui.resources import sample_project_copy

    return sample_project_copy()


def _run_gui(ns: argparse.Namespace) -> int:
    from gui.app import create_app

    app = create_app([sys.argv[0]])
    from gui.main_window import MainWindow
    from gui.recent import RecentProjects

    if ns.screenshot is not None:
        from gui.screenshot import screenshot_window

        window = MainWindow(recent=RecentProjects(persist=False))
        window.confirm_discard = lambda: "discard"
        window.show_error = lambda text: print(f"memdesk: {text}", file=sys.stderr)  # no dialogs offscreen
        if not window.open_project(_project(ns.path)):
            return 1
        if ns.view not in window.view_keys():
            print(f"memdesk: the {ns.view} view is not available in this build "
                  f"(available: {', '.join(window.view_keys())})", file=sys.stderr)
            return 2
        ok = screenshot_window(window, ns.view, ns.screenshot, ns.size)
        window.close()
        if not ok:
            print(f"memdesk: could not write {ns.screenshot}", file=sys.stderr)
            return 1
        print(f"memdesk: wrote {ns.screenshot}")
        return 0
    window = MainWindow()
    window.resize(*ns.size)
    window.show()
    app.processEvents()  # paint the window before the project (and core) loads
    if window.open_project(_project(ns.path)) and ns.view in window.view_keys():
        window.show_view(ns.view)
    _settle_in()
    return app.exec()


def _settle_in() -> None:
    """Load python-markdown now (the first preview would) and freeze the start-up heap with it."""
    from gui.app import freeze_heap
    from gui.editor.preview import render_markdown

    render_markdown("")
    freeze_heap()


if __name__ == "__main__":
    raise SystemExit(main())
