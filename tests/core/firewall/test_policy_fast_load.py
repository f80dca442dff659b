"""The firewall policy of a write's usual case is known from one stat, without resolving the path again; a new,
changed or removed file, and a link swapped in, take the long way (core/firewall/policy.py, issue 19 item 7)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from core.errors import PathOutsideRootError
from core.firewall import policy as pol
from core.firewall.policy import POLICY_FILE, load_policy, set_rule
from core.storage import safepath


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / POLICY_FILE).parent.mkdir(parents=True)
    old = time.time() - 60  # the folder's mtime from a minute ago: a file made now changes it for sure
    os.utime((root / POLICY_FILE).parent, (old, old))
    monkeypatch.setattr(safepath, "RACY_NS", 0)  # ctime cannot be set back: treat every time as settled
    pol._SEEN.clear()
    pol._CACHE.clear()
    return root


def _no_resolving(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: object) -> None:
        raise AssertionError("resolved the policy path again")

    monkeypatch.setattr(pol.fileio, "resolve_in_root", refuse)


def test_a_settled_file_is_read_once_then_known_by_its_stat(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    set_rule(project, "token", "secret", "hold")
    load_policy(project)
    load_policy(project)  # the second finds the parsed file and remembers its identity
    with monkeypatch.context() as m:
        _no_resolving(m)
        assert load_policy(project).rules == {"token": {"secret": "hold"}}
    set_rule(project, "token", "secret", "allow")  # a new file (rename over it): the long way, the new rule
    assert load_policy(project).rules == {"token": {"secret": "allow"}}
    (project / POLICY_FILE).unlink()
    assert load_policy(project).rules == {}


def test_no_file_is_known_by_its_folder_until_a_file_appears(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_policy(project).rules == {}
    with monkeypatch.context() as m:
        _no_resolving(m)
        assert load_policy(project).rules == {}
    (project / POLICY_FILE).write_text('{"version": 1, "rules": {"token": {"injection": "refuse"}}}')
    assert load_policy(project).rules == {"token": {"injection": "refuse"}}


def test_a_folder_changed_in_the_same_tick_is_not_trusted(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    (root / POLICY_FILE).parent.mkdir(parents=True)
    pol._SEEN.clear()
    load_policy(root)  # the folder was made just now: a file made in the same tick would keep its times
    assert str(root / POLICY_FILE) not in pol._SEEN


def test_a_link_out_swapped_in_is_refused_not_answered_from_memory(project: Path, tmp_path: Path) -> None:
    set_rule(project, "token", "secret", "hold")
    load_policy(project)
    load_policy(project)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "firewall-policy.json").write_text('{"version": 1, "rules": {}}')
    folder = (project / POLICY_FILE).parent
    folder.rename(tmp_path / "moved")
    folder.symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathOutsideRootError):
        load_policy(project)
