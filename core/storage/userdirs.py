"""The folder of the user's own memdesk files (``config.json``, tokens, connections), without platformdirs.

``platformdirs`` answers ``$XDG_CONFIG_HOME/memdesk`` or ``~/.config/memdesk`` on Linux, and importing
it costs a short command (``memdesk append`` asks whether the user's config adds budget consumers)
more than the rest of that question. Linux with an absolute ``$XDG_CONFIG_HOME`` or ``$HOME`` gets the
same answer here (a test compares the two); every other case (macOS, Windows, Android, a relative or
missing home) asks platformdirs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

CONFIG_DIR_ENV = "MEMDESK_CONFIG_DIR"
APP_NAME = "memdesk"


def _linux_config_dir() -> str | None:
    """The XDG config folder of memdesk on plain Linux, or ``None`` where platformdirs must decide."""
    if sys.platform != "linux" or hasattr(sys, "getandroidapilevel") or (
            os.environ.get("ANDROID_DATA") == "/data" and os.environ.get("ANDROID_ROOT") == "/system"):
        return None
    base = os.environ.get("XDG_CONFIG_HOME", "")
    if os.path.isabs(base):
        return os.path.join(base, APP_NAME)
    if not os.path.isabs(os.environ.get("HOME", "")):
        return None  # platformdirs looks the home folder up
    return os.path.join(os.path.expanduser("~/.config"), APP_NAME)


def platform_config_dir() -> Path:
    """``platformdirs.user_config_dir("memdesk", appauthor=False)``."""
    found = _linux_config_dir()
    if found is not None:
        return Path(found)
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME, appauthor=False))


def user_config_dir() -> Path:
    """The folder of the user's config: ``$MEMDESK_CONFIG_DIR``, else the platform's user config dir."""
    override = os.environ.get(CONFIG_DIR_ENV)
    if override:
        return Path(override).expanduser()
    return platform_config_dir()


def local_author(kind: str) -> str:
    """Who writes from this machine, as recorded writers are named (``kind:name``): ``operator:ana``
    for the app, ``cli:ana`` for the CLI (History's Author column, the Activity view's writer)."""
    user = login_name()
    return f"{kind}:{user}" if user else kind


def login_name() -> str | None:
    """The login name as :func:`getpass.getuser` finds it (``LOGNAME``, ``USER``, ``LNAME``, ``USERNAME``, then the
    password database), ``None`` when there is none. Not ``getpass`` itself: it imports ``termios`` for its
    prompts, which every ``memdesk append`` process paid for."""
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        user = os.environ.get(name)
        if user:
            return user
    try:
        import pwd
    except ImportError:  # Windows: getpass gives up here too
        return None
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except (KeyError, OSError):  # no entry for this uid (a container without one)
        return None
