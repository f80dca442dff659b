"""The login name in writers' names (``cli:ana``) without ``getpass``, which imports ``termios`` (issue 19 item 7)."""

from __future__ import annotations

import pytest


def test_the_login_name_is_found_as_getpass_finds_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import getpass

    from core.storage.userdirs import local_author, login_name

    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.delenv(name, raising=False)
    assert login_name() == getpass.getuser()  # the password database's entry
    monkeypatch.setenv("USERNAME", "last")
    monkeypatch.setenv("USER", "second")
    assert login_name() == getpass.getuser() == "second"
    monkeypatch.setenv("LOGNAME", "ana")
    assert login_name() == getpass.getuser() == "ana" and local_author("cli") == "cli:ana"
