"""The write contract in CI (issue 19, item 1): only the pipeline's file layer opens files for writing.

Every change to a memory document or to memdesk's state goes through :mod:`core.storage.pipeline` and the file
layer under it (:mod:`core.storage.fileio`, :mod:`core.storage.locks`). This test reads the code (its AST, not its
text) of ``core`` and ``gui`` and fails on any other module that writes a file: ``open`` with a
writing mode, ``os.open``/``os.fdopen`` with writing flags or modes, ``Path.write_text``/``write_bytes``,
``shutil`` copies and moves, ``os.replace``/``rename``/``truncate``, deletes, temporary files, or a
SQLite connection. The few modules allowed are listed below, each with what it writes and why it
may; a new one must go through the pipeline, or be added here with its reason in review.

A second list keeps the file layer's own writers (``fileio.atomic_write_bytes``, ``fileio.replace_text``,
``saving.replace_text``, ``docio.replace_document``…) to the two doors and what they call: a memory
document goes through :mod:`core.storage.pipeline`, one of memdesk's named state files (settings, proposals,
tokens, the firewall's policy and inbox…) through :mod:`core.storage.statefiles`. A module that calls the file
layer's writers around them fails the test.
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
    "core/storage/fileio.py": (frozenset({"tempfile", "fdopen-write", "os.replace", "os.ftruncate", "write-flags",
                                  "unlink"}),
                       "the file layer: atomic replace (temp file, fsync, rename) and O_APPEND under the lock"),
    "core/storage/plain_append.py": (frozenset({"write-flags"}),
                             "the file layer's append at O(entry): O_RDWR|O_APPEND|O_NOFOLLOW on the target the "
                             "pipeline resolved and checked, under the document's lock"),
    "core/storage/locks.py": (frozenset({"write-flags", "unlink"}),
                      "the file layer's lock files under .fusion/memdesk/locks (confined, never through a link)"),
    "core/storage/fusion_lock.py": (frozenset({"write-flags", "unlink"}),
                                    "Fusion's own lock file beside ~/.fusion/settings.json (O_EXCL|O_NOFOLLOW), taken "
                                    "as Fusion takes it around a change to its global settings"),
    "core/storage/history/db.py": (frozenset({"sqlite3.connect"}),
                           "memdesk's history.db, confined to the project before every open (check_confined)"),
    "core/search/db.py": (frozenset({"sqlite3.connect"}),
                          "the derived search index in the user's cache folder, never in a project"),
    "core/cli/__init__.py": (frozenset({"write-flags"}),
                             "opens /dev/null to stand in for stdout once the reader closed the pipe (| head)"),
    "core/storage/readlog.py": (frozenset({"sqlite3.connect"}),
                        "the log of reads (reads.db) in the user's memdesk folder, never in a project"),
    "core/settings/store/fusion_db.py": (frozenset({"sqlite3.connect"}),
                                         "Fusion's own settings database (.fusion/fusion.db), as Fusion writes it"),
    "core/settings/store/stamp.py": (frozenset({"sqlite3.connect"}),
                                     "reads fusion.db's change stamp (read-only URI)"),
    "core/firewall/ds_patterns.py": (frozenset({"write_text"}),
                                     "regenerates its bundled data file, only when run as a script by a developer"),
    "core/firewall/prefilter_build.py": (frozenset({"write_text"}),
                                         "regenerates data/prefilter.json, only when run as a script by a developer"),
    "core/providers/session.py": (frozenset({"write-flags"}),
                                  "compares the flags of /proc fdinfo (who holds a file open for writing); opens "
                                  "nothing"),
    "core/providers/command.py": (frozenset({"shutil.rmtree"}),
                                  "removes its own temporary working folder (outside any project) after a run"),
    "gui/resources.py": (frozenset({"shutil.copytree"}),
                         "copies the bundled sample project to the user's data folder on first start"),
}


#: The file layer's writing functions: a call to one writes a file.
LAYER_WRITERS = frozenset({"atomic_write_bytes", "replace_text", "append_bytes", "open_regular_for_append",
                           "write_all", "rollback_append", "replace_document", "append_document",
                           "overwrite_in_place", "remove_file"})
LAYER_MODULES = frozenset({"fileio", "saving", "docio"})
#: module -> why it may call the file layer's writers (everything else goes through one of the two doors).
DOORS: dict[str, str] = {
    "core/storage/pipeline.py": "the door for memory documents (what, where, lock, read, screen, write, record, report)",
    "core/storage/statefiles.py": "the door for memdesk's named state files (core.storage.statefiles.REGISTRY)",
    "core/storage/saving.py": "the pipeline's versioned replace: fileio.replace_text with the previous version kept",
    "core/storage/docio.py": "the backends' document replace and append, called by the pipeline's write stage",
    "core/storage/plain_append.py": "the pipeline's O(entry) append on the target it resolved, under its lock",
    "core/backends/base.py": "a backend's write_document/append_document, called by the pipeline's write stage",
    "core/backends/file.py": "the file backend's write of the working memory, called through the pipeline",
    "core/backends/mirror_ledger.py": "the database backends' write of a mirror file (a memory document) inside "
                                      "their append_document/write_document, called by the pipeline's write stage: "
                                      "the file layer's O_APPEND (confined, O_NOFOLLOW) and atomic replace; its "
                                      "ledger notes go through core.storage.statefiles (issue 19 item 2)",
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


def _layer_names(tree: ast.AST) -> set[str]:
    """Names bound to the file layer's writers by ``from core.storage.fileio import replace_text [as x]`` and the like."""
    return {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and (node.module or "").rsplit(".", 1)[-1] in LAYER_MODULES for alias in node.names
            if alias.name in LAYER_WRITERS}


def layer_calls(path: Path) -> list[Write]:
    """Every call in ``path`` to one of the file layer's writers (``fileio.replace_text(...)`` and the like)."""
    rel = path.relative_to(REPO).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    bare = _layer_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        if isinstance(fn, ast.Attribute) and fn.attr in LAYER_WRITERS and \
                ast.unparse(fn.value).rsplit(".", 1)[-1] in LAYER_MODULES:
            found.append(Write(rel, node.lineno, f"{ast.unparse(fn.value).rsplit('.', 1)[-1]}.{fn.attr}"))
        elif isinstance(fn, ast.Name) and fn.id in bare:
            found.append(Write(rel, node.lineno, fn.id))
    return found


def all_layer_calls() -> list[Write]:
    out: list[Write] = []
    for package in ("core", "gui"):
        for path in sorted((REPO / package).rglob("*.py")):
            if path.relative_to(REPO).as_posix() not in ("core/storage/fileio.py",):
                out += layer_calls(path)
    return out


def all_writes() -> list[Write]:
    out: list[Write] = []
    for package in ("core", "gui"):
        for path in sorted((REPO / package).rglob("*.py")):
            out += writes(path)
    return out


def test_no_module_outside_the_file_layer_writes_files():
    stray = [w for w in all_writes() if w.kind not in ALLOWED.get(w.module, (frozenset(), ""))[0]]
    assert not stray, "files written outside core.storage.pipeline's file layer (route them through core.storage.pipeline / " \
        "core.storage.fileio, or add the module to ALLOWED with its reason):\n" + \
        "\n".join(f"  {w.module}:{w.line}: {w.kind}" for w in stray)


def test_only_the_doors_call_the_file_layers_writers():
    """A state file (settings, proposals, tokens…) written with fileio around core.storage.statefiles fails here."""
    stray = [w for w in all_layer_calls() if w.module not in DOORS]
    assert not stray, "the file layer's writers called around the doors (write memory documents through " \
        "core.storage.pipeline and memdesk's state files through core.storage.statefiles.write):\n" + \
        "\n".join(f"  {w.module}:{w.line}: {w.kind}" for w in stray)


def test_the_doors_list_names_only_callers():
    callers = {w.module for w in all_layer_calls()}
    assert not sorted(set(DOORS) - callers), f"in DOORS but calling no writer: {sorted(set(DOORS) - callers)}"


def test_a_state_write_around_the_door_fails_the_contract():
    """Proven by trying: a module writing memdesk's settings with fileio directly is caught, in every spelling."""
    probe = REPO / "core" / "_door_probe.py"
    probe.write_text(
        "from core.storage import fileio, saving\nfrom core.storage.fileio import atomic_write_bytes as awb\n"
        "import core.storage.fileio\n"
        "def f(root, path):\n"
        "    fileio.atomic_write_bytes(path, b'{}')\n"
        "    fileio.replace_text(root, '.fusion/memdesk/settings.json', '{}', keep_history=False)\n"
        "    saving.replace_text(root, '.fusion/memdesk/proposals/x.json', '{}')\n"
        "    core.storage.fileio.append_bytes(root, '.fusion/memdesk/inbox.json', b'x')\n"
        "    awb(path, b'{}')\n", encoding="utf-8")
    try:
        calls = [w for w in all_layer_calls() if w.module == "core/_door_probe.py"]
        stray = [w for w in calls if w.module not in DOORS]
    finally:
        probe.unlink()
    assert [w.line for w in stray] == [5, 6, 7, 8, 9]
    assert {w.kind for w in stray} == {"fileio.atomic_write_bytes", "fileio.replace_text", "saving.replace_text",
                                       "fileio.append_bytes", "awb"}


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
