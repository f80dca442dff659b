"""Whether the user's config adds consumers is read again only when the file changed (one stat an append,
core/budget/registry.py, issue 19 item 7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.budget import registry
from core.storage import fileio, safepath
from core.storage.userdirs import CONFIG_DIR_ENV


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CONFIG_DIR_ENV, str(tmp_path / "cfg"))
    (tmp_path / "cfg").mkdir()
    monkeypatch.setattr(registry, "_DEFINES", {})
    return tmp_path / "cfg" / "config.json"


def _unread(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("read the user's config again")

    monkeypatch.setattr(fileio, "read_text", refuse)  # a read would raise, and the answer would be False


def test_the_same_settled_file_is_not_read_again_and_a_changed_one_is(config: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safepath, "RACY_NS", 0)  # ctime cannot be set back: every time counts as settled
    config.write_text(json.dumps({"consumers": [{"id": "mine", "name": "Mine"}]}))
    assert registry.user_defines_consumers() is True
    with monkeypatch.context() as m:
        _unread(m)
        assert registry.user_defines_consumers() is True
        assert registry.plain_table() is None
    config.write_text(json.dumps({"theme": "dark"}))  # another size and time: read again
    assert registry.user_defines_consumers() is False
    assert registry.plain_table() is not None
    config.unlink()
    assert registry.user_defines_consumers() is False


def test_a_file_changed_just_now_is_read_each_time(config: Path) -> None:
    config.write_text(json.dumps({"consumers": [{"id": "mine"}]}))
    assert registry.user_defines_consumers() is True
    assert registry._DEFINES == {}  # written within 2 s: a change in the same tick would keep its times
