"""core.storage.frozen.Record: the pipeline's records (and a few others on the append path) keep a frozen
dataclass's interface after leaving ``@dataclass`` for its import cost (issue 19 item 7)."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

from core.project.model import AppendOutcome, Changes
from core.settings.store.connections import FusionConnection
from core.storage.pipeline import Flag, Outcome, ScreenVerdict, Writer, WriteRequest


def test_keyword_and_positional_arguments_and_defaults() -> None:
    assert Writer("cli", "ana") == Writer(kind="cli", name="ana")
    assert Writer("cli").name is None
    verdict = ScreenVerdict("hold", inbox_id="in-1")
    assert (verdict.action, verdict.flags, verdict.inbox_id, verdict.reason) == ("hold", (), "in-1", None)
    out = Outcome("written", "MEMORY.md", True, before="a", data=b"ab")
    assert (out.changed, out.added, out.after, out.data, out.flags, out.warnings) == (True, None, None, b"ab", (), ())
    assert AppendOutcome("written", None, "MEMORY.md", "ok").changes == Changes()
    assert FusionConnection("http://127.0.0.1:4040", None).source == "user config"


def test_frozen_equality_hash_and_repr() -> None:
    flag = Flag("aws-key", "secret", 2, (3, 23), "an AWS access key")
    with pytest.raises(AttributeError, match="frozen"):
        flag.line = 3  # type: ignore[misc]
    with pytest.raises(AttributeError, match="frozen"):
        del flag.rule  # type: ignore[misc]
    with pytest.raises(AttributeError):
        flag.extra = 1  # type: ignore[attr-defined]
    assert flag == Flag("aws-key", "secret", 2, (3, 23), "an AWS access key")
    assert flag != Flag("aws-key", "secret", 3, (3, 23), "an AWS access key")
    assert flag != ("aws-key", "secret", 2, (3, 23), "an AWS access key")
    assert len({flag, Flag("aws-key", "secret", 2, (3, 23), "an AWS access key")}) == 1
    assert repr(Writer("mcp", "bot")) == "Writer(kind='mcp', name='bot')"
    assert "data=" not in repr(Outcome("written", "MEMORY.md", data=b"secret bytes"))  # field(repr=False) as before


def test_writer_kind_is_checked() -> None:
    with pytest.raises(ValueError, match="writer kind 'robot' is not one of"):
        Writer("robot")  # type: ignore[arg-type]


def test_pickle_and_copy_round_trip() -> None:
    request = WriteRequest("MEMORY.md", "append", "- note", Writer("token", "t1"), "http-append", None)
    outcome = AppendOutcome("held", Path("/p/MEMORY.md"), "MEMORY.md", "held", inbox_id="in-2")
    for value in (request, outcome, FusionConnection("http://h:1", "tok", "p1", "Fusion's settings")):
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.deepcopy(value) == value and copy.copy(value) == value
