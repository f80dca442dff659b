"""The write contract in CI (issue 19, item 1): only the pipeline's file layer opens files for writing.

Every change to a memory document or to memdesk's state goes through :mod:`core.pipeline` and the file
layer under it (:mod:`core.fileio`, :mod:`core.locks`). This test reads the code (its AST, not its
text) of ``core`` and ``gui`` and fails on any other module that writes a file: ``open`` with a
writing mode, ``os.open``/``os.fdopen`` with writing flags or modes, ``Path.write_text``/``write_bytes``,
``shutil`` copies and moves, ``os.replace``/``rename``/``truncate``, deletes, temporary files, or a
SQLite connection. The few modules allowed are listed below, each with what it writes and why it
may; a new one must go through the pipeline, or be added here with its reason in review.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
SHUTIL_WRITES = {"copy", "copy2", "copyfile", "copytree", "copyfileobj", "move", "rmtree"}
OS_WRITES = {"replace", "rename", "renames", "link", "symlink", "truncate", "ftruncate", "unlink", "remove",
             "removedirs", "rmdir"}

#: module -> (kinds it may use, why). Kinds: see :func:`writes`.
ALLOWED: dict[str, tuple[frozenset[str], str]] = {
    "core/fileio.py": (frozenset({"tempfile", "fdopen-write", "os.replace", "os.ftruncate", "write-flags",
                                  "unlink"}),
                       "the file layer: atomic replace (temp file, fsync, rename) and O_APPEND under the lock"),
    "core/plain_append.py": (frozenset({"write-flags"}),
                             "the file layer's append at O(entry): O_RDWR|O_APPEND|O_NOFOLLOW on the target the "
                             "pipeline resolved and checked, under the document's lock"),
    "core/locks.py": (frozenset({"write-flags", "unlink"}),
                      "the file layer's lock files under .fusion/memdesk/locks (confined, never through a link)"),
    "core/history_db.py": (frozenset({"sqlite3.connect"}),
                           "memdesk's history.db, confined to the project before every open (check_confined)"),
    "core/search/db.py": (frozenset({"sqlite3.connect"}),
                          "the derived search index in the user's cache folder, never in a project"),
    "core/cli/__init__.py": (frozenset({"write-flags"}),
                             "opens /dev/null to stand in for stdout once the reader closed the pipe (| head)"),
    "core/readlog.py": (frozenset({"sqlite3.connect"}),
                        "the log of reads (reads.db) in the user's memdesk folder, never in a project"),
    "core/settings_store/fusion_db.py": (frozenset({"sqlite3.connect"}),
                                         "Fusion's own settings database (.fusion/fusion.db), as Fusion writes it"),
    "core/settings_store/stamp.py": (frozenset({"sqlite3.connect"}),
                                     "reads fusion.db's change stamp (read-only URI)"),
    "core/backends/pg/mirror.py": (frozenset({"write-flags", "os.replace", "os.ftruncate", "unlink"}),
                                   "the postgres mirror's O_APPEND and its note of what was mirrored (confined, "
                                   "O_NOFOLLOW; issue 19 item 2 reconciles it)"),
    "core/backends/mirror_ledger.py": (frozenset({"write-flags", "unlink"}),
                                       "the database backends' mirror files: memdesk's O_APPEND (the offset it "
                                       "landed at) and the ledger notes under .fusion/memdesk/mirror (confined, "
                                       "O_NOFOLLOW; replacements go through fileio.atomic_write_bytes)"),
    "core/firewall/inbox.py": (frozenset({"write-flags"}),
                               "the firewall's inbox under .fusion/memdesk (created O_EXCL, mode 0600)"),
    "core/firewall/ds_patterns.py": (frozenset({"write_text"}),
                                     "regenerates its bundled data file, only when run as a script by a developer"),
    "core/migrate.py": (frozenset({"unlink"}),
                        "removes the legacy .fusion/memory.md after its text is kept in history and moved"),
    "core/providers/session.py": (frozenset({"write-flags"}),
                                  "compares the flags of /proc fdinfo (who holds a file open for writing); opens "
                                  "nothing"),
    "core/providers/command.py": (frozenset({"shutil.rmtree"}),
                                  "removes its own temporary working folder (outside any project) after a run"),
    "gui/resources.py": (frozenset({"shutil.copytree"}),
                         "copies the bundled sample project to the user's data folder on first start"),
}


@dataclass(frozen=True)
class Write:
    module: str
    line: int
    kind: str


def _mode(call: ast.Call, position: int) -> str | None:
    """The mode string of an open-like call ('?' when it is not a constant), ``None`` when none is given."""
    for kw in call.keywords:
        if kw.arg == "mode":
            return kw.value.value if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str) else "?"
    if len(call.args) > position:
        arg = call.args[position]
        return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else "?"
    return None


def _writing(mode: str | None) -> bool:
    return mode is not None and (mode == "?" or bool(set(mode) & set("wax+")))


def _sqlite_connects(tree: ast.AST) -> set[str]:
    """Names bound to ``sqlite3.connect`` by ``from sqlite3 import connect [as x]``."""
    return {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module == "sqlite3" for alias in node.names if alias.name == "connect"}


def writes(path: Path) -> list[Write]:
    """Every place in ``path`` that writes a file, by kind."""
    rel = path.relative_to(REPO).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    connects = _sqlite_connects(tree)
    found: list[Write] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in WRITE_FLAGS or \
                isinstance(node, ast.Name) and node.id in WRITE_FLAGS:
            found.append(Write(rel, node.lineno, "write-flags"))
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
        base = ast.unparse(fn.value) if isinstance(fn, ast.Attribute) else ""
        kind = None
        if name == "open" and base in ("", "io", "builtins"):
            kind = "open-write" if _writing(_mode(node, 1)) else None
        elif name == "open" and base == "os":
            kind = None  # its flags are caught as write-flags
        elif name == "open":  # Path.open(mode): a constant writing mode (other .open methods take other things)
            mode = _mode(node, 0)
            kind = "open-write" if mode != "?" and _writing(mode) else None
        elif name == "fdopen":
            kind = "fdopen-write" if _writing(_mode(node, 1)) else None
        elif name in ("write_text", "write_bytes"):
            kind = name
        elif base == "shutil" and name in SHUTIL_WRITES:
            kind = f"shutil.{name}"
        elif base == "sqlite3" and name == "connect" or isinstance(fn, ast.Name) and name in connects:
            kind = "sqlite3.connect"
        elif base == "os" and name in OS_WRITES:
            kind = f"os.{name}" if name not in ("unlink", "remove") else "unlink"
        elif name in ("unlink", "rmdir") and base:  # Path.unlink()
            kind = "unlink"
        elif name in ("mkstemp", "NamedTemporaryFile", "TemporaryFile", "SpooledTemporaryFile"):
            kind = "tempfile"
        if kind:
            found.append(Write(rel, node.lineno, kind))
    return found


def all_writes() -> list[Write]:
    out: list[Write] = []
    for package in ("core", "gui"):
        for path in sorted((REPO / package).rglob("*.py")):
            out += writes(path)
    return out


def test_no_module_outside_the_file_layer_writes_files():
    stray = [w for w in all_writes() if w.kind not in ALLOWED.get(w.module, (frozenset(), ""))[0]]
    assert not stray, "files written outside core.pipeline's file layer (route them through core.pipeline / " \
        "core.fileio, or add the module to ALLOWED with its reason):\n" + \
        "\n".join(f"  {w.module}:{w.line}: {w.kind}" for w in stray)


def test_the_allow_list_names_only_what_is_there():
    """An entry that no longer writes is dropped, so the list stays the truth."""
    used = {(w.module, w.kind) for w in all_writes()}
    unused = sorted((module, kind) for module, (kinds, _why) in ALLOWED.items() for kind in kinds
                    if (module, kind) not in used)
    assert not unused, f"allowed but not used (remove them from ALLOWED): {unused}"


def test_the_scanner_catches_each_kind(tmp_path: Path):
    sample = REPO / "core" / "_contract_probe.py"
    sample.write_text(
        "import os, shutil, sqlite3\nfrom pathlib import Path\nfrom sqlite3 import connect as c\n"
        "open('x', 'w')\nopen('x', mode='ab')\nopen('x')\nPath('x').open('r+')\nPath('x').write_text('y')\n"
        "os.open('x', os.O_WRONLY | os.O_CREAT)\nos.fdopen(3, 'wb')\nshutil.copy('a', 'b')\n"
        "sqlite3.connect('db')\nc('db')\nos.replace('a', 'b')\nPath('x').unlink()\n", encoding="utf-8")
    try:
        kinds = [w.kind for w in writes(sample)]
    finally:
        sample.unlink()
    assert kinds.count("open-write") == 3 and "write_text" in kinds and kinds.count("write-flags") == 2
    assert {"fdopen-write", "shutil.copy", "os.replace", "unlink"} <= set(kinds)
    assert kinds.count("sqlite3.connect") == 2
