"""core.frozen.Record: the pipeline's records (and a few others on the append path) keep a frozen
dataclass's interface after leaving ``@dataclass`` for its import cost (issue 19 item 7)."""

from __future__ import annotations

import copy
import hashlib
import pickle
from pathlib import Path

import pytest

from core.documents.layout import DocumentInfo
from core.firewall.rules import Finding
from core.project.model import AppendOutcome, Changes, WriteResult
from core.settings.store.connections import FusionConnection
from core.storage.fileio import ReplaceResult
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


# -- the append path's last dataclasses (issue 19 item 7): the same interface as Records ----------------------

def test_changes_defaults_union_truth_and_equality() -> None:
    assert Changes() == Changes(frozenset(), False, False, False, False, False) and not Changes()
    both = Changes(frozenset({"a.md"}), insights=True) | Changes(frozenset({"b.md"}), history=True)
    assert both == Changes(documents=frozenset({"a.md", "b.md"}), insights=True, history=True) and both
    assert repr(Changes(audit=True)) == ("Changes(documents=frozenset(), insights=False, audit=True, "
                                         "proposals=False, settings=False, history=False)")
    assert hash(Changes(settings=True)) == hash(Changes(settings=True))
    with pytest.raises(AttributeError, match="frozen"):
        both.audit = True  # type: ignore[misc]


def test_write_result_hash_is_worked_out_once_and_data_is_neither_compared_nor_shown() -> None:
    result = WriteResult("MEMORY.md", True, 3, data=b"abc")
    assert (result.changes, result.warnings, result.status, result.flags, result.inbox_id) == (
        Changes(), (), "written", (), None)
    assert result.hash == hashlib.sha256(b"abc").hexdigest() and result.hash is result.hash
    assert result == WriteResult("MEMORY.md", True, 3, data=b"other bytes")  # field(compare=False), as before
    assert result != WriteResult("MEMORY.md", False, 3, data=b"abc")
    assert "abc" not in repr(result) and repr(result).startswith("WriteResult(path='MEMORY.md', changed=True")
    with pytest.raises(AttributeError, match="frozen"):
        result.data = b""  # type: ignore[misc]
    again = pickle.loads(pickle.dumps(result))
    assert again == result and again.data == b"abc" and again.hash == result.hash


def test_replace_result_hash_from_data_and_equality_without_data(tmp_path: Path) -> None:
    lazy = ReplaceResult(tmp_path / "m.md", True, None, 2, b"hi")
    assert lazy.content_hash == hashlib.sha256(b"hi").hexdigest() and lazy._hash == lazy.content_hash
    given = ReplaceResult(tmp_path / "m.md", True, "h", 2)
    assert given.content_hash == "h" and given == ReplaceResult(tmp_path / "m.md", True, "h", 2, b"ignored")
    assert "_data" not in repr(lazy)
    with pytest.raises(AttributeError, match="frozen"):
        given.size = 3  # type: ignore[misc]


def test_document_info_and_finding_keep_their_shapes() -> None:
    info = DocumentInfo("MEMORY.md", "Long-term memory", "long-term", size=12)
    assert info == DocumentInfo(path="MEMORY.md", label="Long-term memory", layer="long-term", agent=None, size=12)
    assert info.to_json() == {"path": "MEMORY.md", "label": "Long-term memory", "layer": "long-term", "agent": None,
                              "size": 12, "updatedAt": None, "legacy": False}
    finding = Finding("aws-key", "secret", 2, (3, 23), "an AWS access key")
    assert finding == Finding(rule="aws-key", kind="secret", line=2, span=(3, 23), message="an AWS access key")
    assert finding.to_json()["span"] == [3, 23] and len({finding, Finding(*pickle.loads(pickle.dumps(
        finding))._values())}) == 1
    with pytest.raises(AttributeError, match="frozen"):
        info.size = 1  # type: ignore[misc]


def test_the_cli_turns_records_into_json_as_it_did_dataclasses(tmp_path: Path) -> None:
    from core.cli.common import to_jsonable

    assert to_jsonable(Changes(frozenset({"b", "a"}), audit=True)) == {
        "documents": ["a", "b"], "insights": False, "audit": True, "proposals": False, "settings": False,
        "history": False}
    assert to_jsonable(ReplaceResult(tmp_path, False, "h", 0)) == {
        "path": str(tmp_path), "changed": False, "_hash": "h", "size": 0, "_data": None}
