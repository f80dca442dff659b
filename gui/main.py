"""The ``memdesk`` command: the desktop app, or a headless subcommand handed to :mod:`core.cli`.

``memdesk [PATH] [--screenshot FILE.png] [--view NAME] [--size WxH] [--theme MODE]`` opens ``PATH``
(with no path, a writable copy of the bundled sample project). ``memdesk show|write|append|…`` runs
without Qt. PySide6 is imported only once the GUI is really wanted, so headless commands start fast.

On Linux without a display the window cannot open, and Qt would abort with a misleading message
about ``xcb-cursor0``; :func:`display_problem` finds that first and says what to do instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from core.cli import COMMANDS  # a table only: it imports no command module

#: The headless commands (the CLI's own table, so a new command is never opened as a project folder).
HEADLESS_COMMANDS = frozenset(COMMANDS)
VIEW_NAMES = ("editor", "settings", "backends", "insights", "prune", "audit", "search", "history", "consolidation",
              "activity", "inbox")
THEMES = ("system", "light", "dark")


def display_problem(env: dict[str, str] | os._Environ[str] | None = None, platform: str | None = None) -> str | None:
    """One line saying why the window cannot open here and what to do, or ``None`` when it can.

    Only Linux without ``QT_QPA_PLATFORM`` is checked: there Qt picks xcb or wayland and aborts
    when neither can connect. ``run.sh`` sets ``MEMDESK_COMMAND`` so the advice names it.
    """
    env = os.environ if env is None else env
    if not (platform or sys.platform).startswith("linux") or env.get("QT_QPA_PLATFORM"):
        return None
    command = env.get("MEMDESK_COMMAND") or "memdesk"
    advice = (f"start it from a desktop session, under a virtual display (xvfb-run {command}), or take a "
              f"picture offscreen ({command} --screenshot FILE.png)")
    display, wayland = env.get("DISPLAY", ""), env.get("WAYLAND_DISPLAY", "")
    if not display and not wayland:
        return f"memdesk: no display to open the window on (DISPLAY and WAYLAND_DISPLAY are unset); {advice}."
    if wayland:
        return None
    if display.startswith(":") and not _x_socket_exists(display):
        return f"memdesk: DISPLAY is {display}, but no X server is listening there; {advice}."
    import ctypes.util  # here: it costs a headless `memdesk append` ~10 ms (shutil, subprocess, ctypes)

    if ctypes.util.find_library("xcb-cursor") is None:
        return ("memdesk: Qt needs the xcb-cursor library to open a window on X11, and it is not installed; "
                f"install libxcb-cursor0 (Debian/Ubuntu: apt install libxcb-cursor0), or {advice}.")
    return None


def _x_socket_exists(display: str) -> bool:
    number = display[1:].split(".", 1)[0]
    return not number.isdigit() or Path(f"/tmp/.X11-unix/X{number}").exists()


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
    from core.version import memdesk_version  # a few lines, no Qt: --version needs no display

    parser.add_argument("--version", action="version", version=f"memdesk {memdesk_version()}")
    parser.add_argument("--screenshot", metavar="FILE.png", type=Path,
                        help="render the window offscreen to this PNG and exit")
    parser.add_argument("--view", choices=VIEW_NAMES, default="editor", help="tab to show (default: editor)")
    parser.add_argument("--size", type=_size, default=None, metavar="WxH",
                        help="window size (default: 1200x720, or less to fit the screen; 1280x800 for --screenshot)")
    parser.add_argument("--theme", choices=THEMES, default=None,
                        help="light, dark, or follow the system (default: the last one chosen in View ▸ Theme)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run memdesk; return the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in HEADLESS_COMMANDS:
        from core.cli import main as cli_main
        from core.cli.finish import FAST_EXIT_COMMANDS, finish

        code = cli_main(args)
        if argv is None and args[0] in FAST_EXIT_COMMANDS:  # the process itself: end it without teardown
            finish(code)
        return code
    ns = build_parser().parse_args(args)
    if ns.path is not None and not Path(ns.path).is_dir():
        what = "does not exist" if not Path(ns.path).exists() else "is not a folder"
        print(f"memdesk: {ns.path} {what}; give a project folder, or no path to open the sample project",
              file=sys.stderr)
        return 2
    problem = display_problem()
    if ns.screenshot is not None and problem is not None:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a picture needs no display
    elif problem is not None:
        print(problem, file=sys.stderr)
        return 1
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
    from gui.theme import ThemeManager

    theme = ThemeManager(persist=ns.screenshot is None)  # a screenshot changes no preference
    if ns.theme is not None:
        theme.set_mode(ns.theme, remember=False)
    else:
        theme.apply()
    if ns.screenshot is not None:
        from gui.screenshot import screenshot_window

        window = MainWindow(recent=RecentProjects(persist=False), theme=theme)
        window.confirm_discard = lambda: "discard"
        window.show_error = lambda text: print(f"memdesk: {text}", file=sys.stderr)  # no dialogs offscreen
        if not window.open_project(_project(ns.path)):
            return 1
        if ns.view not in window.view_keys():
            print(f"memdesk: the {ns.view} view is not available in this build "
                  f"(available: {', '.join(window.view_keys())})", file=sys.stderr)
            return 2
        ok = screenshot_window(window, ns.view, ns.screenshot, ns.size or (1280, 800))
        window.close()
        if not ok:
            print(f"memdesk: could not write {ns.screenshot}", file=sys.stderr)
            return 1
        print(f"memdesk: wrote {ns.screenshot}")
        return 0
    window = MainWindow(theme=theme)
    if ns.size is not None:
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
