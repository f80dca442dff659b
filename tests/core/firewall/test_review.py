"""Inbox actions through the CLI on real files: merge, supersede, a held replacement onto a moved document."""

from __future__ import annotations

import json

from core.cli import main
from core.firewall.similarity import split_entries
from core.firewall.supersede import in_superseded, mark, superseded_on
from core.project import Project
from core.storage.pipeline import Writer

MEMORY = ".fusion/memory.md"
DOC = ("# Project Memory\n\n## Context\n\n- Use the DB clock for lease expiry\n- Cache the settings reads for "
       "five seconds in the dashboard\n")


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _project(root):
    (root / ".fusion").mkdir(parents=True)
    (root / MEMORY).write_text(DOC, encoding="utf-8")
    return root


def test_the_marker_goes_after_the_list_marker_and_is_found_again():
    entries = list(split_entries(DOC))
    marked = mark(DOC, entries[0])
    assert "- [superseded " in marked and marked.count("[superseded") == 1
    assert mark(marked, list(split_entries(marked))[0]) == marked
    assert superseded_on(list(split_entries(marked))[0].text)
    assert in_superseded(marked, 5) and not in_superseded(marked, 6)
    seed = "# M\n\n<!-- 2026-08-20 -->\nUse the DB clock\nfor leases\n"
    seed_marked = mark(seed, list(split_entries(seed))[0])
    assert seed_marked == "# M\n\n<!-- 2026-08-20 -->\n" + seed_marked.split("\n")[3] + "\nfor leases\n"
    assert seed_marked.split("\n")[3].startswith("[superseded 20")


def test_supersede_marks_the_contradicted_entry_then_appends(project, user_config_dir, capsys):
    root = _project(project / "p")
    run(capsys, "policy", "set", "agents", "contradiction", "hold", "--project", str(root))
    held = Project(root).append("Use the app server clock for lease expiry", writer=Writer("token", "bot"),
                                source="http-append")
    assert held.status == "held"
    code, out, err = run(capsys, "inbox", "supersede", held.inbox_id, "--project", str(root), "--json")
    assert code == 0, err
    text = (root / MEMORY).read_text()
    assert "- [superseded 20" in text and "] Use the DB clock for lease expiry" in text
    assert text.rstrip().endswith("Use the app server clock for lease expiry")
    code, out, _ = run(capsys, "search", "lease expiry", "--mode", "keyword", "--project", str(root), "--json")
    lines = [r["line"] for r in json.loads(out)["results"]]
    assert 5 not in lines and lines
    code, out, _ = run(capsys, "search", "lease expiry", "--mode", "keyword", "--include-superseded",
                       "--project", str(root), "--json")
    assert 5 in [r["line"] for r in json.loads(out)["results"]]


def test_merge_replaces_the_near_duplicate_in_place(project, user_config_dir, capsys):
    root = _project(project / "p")
    run(capsys, "policy", "set", "agents", "near-duplicate", "hold", "--project", str(root))
    held = Project(root).append("Cache the settings reads for five seconds in the dashboard, always",
                                writer=Writer("mcp", "claude"), source="mcp-append")
    assert held.status == "held"
    code, out, err = run(capsys, "inbox", "merge", held.inbox_id, "--project", str(root))
    assert code == 0, err
    assert (root / MEMORY).read_text() == DOC.replace("five seconds in the dashboard\n",
                                                      "five seconds in the dashboard, always\n")


def test_a_held_replacement_is_merged_onto_a_moved_document_or_refused_on_conflict(project, user_config_dir, capsys):
    root = _project(project / "p")
    p = Project(root)
    secret_doc = DOC + "- Deploy key AKIAIOSFODNN7EXAMPLE for staging\n"
    held = p.write(MEMORY, secret_doc, writer=Writer("token", "bot"), source="http-write")
    assert held.status == "held" and (root / MEMORY).read_text() == DOC
    p.append("An unrelated note the operator added meanwhile", writer=Writer("operator"))
    code, out, err = run(capsys, "inbox", "accept", held.inbox_id, "--redact", "--project", str(root))
    assert code == 0, err
    text = (root / MEMORY).read_text()
    assert "An unrelated note the operator added meanwhile" in text
    assert "- Deploy key [REDACTED:secret.aws-key] for staging" in text and "AKIA" not in text

    held2 = p.write(MEMORY, text.replace("DB clock", "DB clock (UTC)") + "- token ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R\n",
                    writer=Writer("token", "bot2"), source="http-write")
    assert held2.status == "held"
    p.write(MEMORY, text.replace("DB clock", "database clock"), writer=Writer("operator"))
    before = (root / MEMORY).read_bytes()
    code, _, err = run(capsys, "inbox", "accept", held2.inbox_id, "--redact", "--project", str(root))
    assert code == 1 and "conflict in" in err and err.count("\n") == 1 and (root / MEMORY).read_bytes() == before
    code, out, _ = run(capsys, "inbox", "list", "--project", str(root))
    assert held2.inbox_id in out  # still pending
