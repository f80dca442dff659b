"""``memdesk search``, ``history list|show|restore`` and ``reindex``: finding memory and going back in time.

Imports are made inside the handlers: ``memdesk search --mode keyword`` on a backend that cannot
search runs on memdesk's derived index alone, without importing pydantic, the backends or the
embedding model, so that the whole process takes less than a tenth of a second.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.cli.common import CliError, add_common, emit_json, fail_from, project_root
from core.cli.light import file_backend

if TYPE_CHECKING:
    from core.storage.history import versions as history

def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the search, history and reindex commands."""
    p = add_common(subparsers.add_parser("search", help="search every memory document of the project"))
    p.add_argument("query", help="words to look for")
    p.add_argument("--mode", choices=("keyword", "semantic", "hybrid"), default="hybrid",
                   help="keyword (FTS5), semantic (meaning) or hybrid (both fused; default)")
    p.add_argument("--limit", type=_positive, default=10, metavar="N", help="at most N results (default 10)")
    p.add_argument("--include-superseded", action="store_true",
                   help="also entries marked [superseded DATE] (left out by default)")
    p.set_defaults(func=cmd_search)

    h = subparsers.add_parser("history", help="list, show or restore earlier versions of memory files")
    hs = h.add_subparsers(dest="history_command", metavar="ACTION")
    p = add_common(hs.add_parser("list", help="list stored versions, newest first"))
    p.add_argument("--path", "--file", dest="path", metavar="REL", help="only versions of this document")
    p.add_argument("--all", action="store_true", help="also files that are not memory documents (proposals)")
    p.add_argument("--appends", action="store_true", help="list the recorded appends (who added what) instead")
    p.set_defaults(func=cmd_history_list)
    p = add_common(hs.add_parser("show", help="print a version (or its diff against now with --diff)"))
    p.add_argument("id", type=_version_id, help="version id (from 'history list')")
    p.add_argument("--diff", action="store_true", help="print the diff from this version to the current content")
    p.add_argument("--path", "--file", dest="path", metavar="REL", help="refuse unless the version is of this file")
    p.set_defaults(func=cmd_history_show)
    p = add_common(hs.add_parser("restore", help="make a version the current content (the replaced one is kept)"))
    p.add_argument("id", type=_version_id, help="version id (from 'history list')")
    p.add_argument("--path", "--file", dest="path", metavar="REL", help="refuse unless the version is of this file")
    p.set_defaults(func=cmd_history_restore)
    p = add_common(hs.add_parser("drop", help="delete a stored version (a damaged one), without rebuilding it"))
    p.add_argument("id", type=_version_id, help="version id (from 'history list' or the error naming it)")
    p.set_defaults(func=cmd_history_drop)
    h.set_defaults(func=lambda _a: _usage(h))

    p = add_common(subparsers.add_parser("reindex", help="rebuild the search indexes from the memory"))
    p.add_argument("--verify", action="store_true", help="then check that every entry can be found")
    p.set_defaults(func=cmd_reindex)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be 1 or more")
    return value


def _version_id(text: str) -> int:
    value = _positive(text)
    if value > 2**63 - 1:
        raise argparse.ArgumentTypeError(f"{text} is not a version id (ids are below 2**63)")
    return value


def _usage(parser: argparse.ArgumentParser) -> int:
    raise CliError(f"{parser.prog}: choose an action: list, show ID or restore ID", 2)


# -- search ---------------------------------------------------------------------------------------
def _search(args: argparse.Namespace, root: Path) -> tuple[list[Any], str, str, str | None]:
    """Run the search; return the results, the backend id, the mode that ran and a note."""
    from core.search.types import MemorySearchOptions

    options = MemorySearchOptions(limit=args.limit, mode=args.mode)
    backend_id = file_backend(root)
    if backend_id is not None:  # its search is memdesk's derived index: no backend, no settings model
        from core.search.derived import DERIVED_MODE, derived_note, derived_search

        return derived_search(root, args.query, options), backend_id, DERIVED_MODE, derived_note(backend_id, args.mode)
    from core.cli.common import cli_project

    project = cli_project(args)
    try:
        if not project.can_search():
            from core.search.derived import DERIVED_MODE, derived_note

            return (project.search(args.query, options), project.backend.id, DERIVED_MODE,
                    derived_note(project.backend.id, args.mode))
        results = project.search(args.query, options)
        note_fn = getattr(project.backend, "search_note", None)
        note = note_fn(args.mode) if callable(note_fn) else None
        return results, project.backend.id, "keyword" if note and note.startswith("keyword") else args.mode, note
    finally:
        project.close()


def cmd_search(args: argparse.Namespace) -> int:
    """Print the results: ``file:line  [section]  score  snippet`` (or JSON), and which mode ran."""
    root = project_root(args)
    if not args.query.strip():
        raise CliError("the query is empty; give words to look for", 2)
    limit = args.limit
    if not args.include_superseded:  # ask for more, then leave superseded entries out
        args.limit = limit * 2 + 10
    try:
        results, backend_id, ran, note = _search(args, root)
        if not args.include_superseded:
            from core.firewall.search_filter import without_superseded

            results = without_superseded(root, results)[:limit]
    except CliError:
        raise
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        emit_json({"query": args.query, "mode": args.mode, "ran": ran, "backend": backend_id, "note": note,
                   "results": [{"file": r.file, "line": r.line_number, "section": r.section, "score": r.score,
                                "scores": dict(r.scores), "snippet": r.content} for r in results]})
        return 0
    if note:
        print(f"memdesk: {note}", file=sys.stderr)
    if not results:
        print("No results.")
    for r in results:
        section = f"  [{r.section}]" if r.section else ""
        snippet = " ".join(r.content.split())
        print(f"{r.file}:{r.line_number}{section}  {r.score:.3f}  {snippet}")
    return 0


# -- history --------------------------------------------------------------------------------------
class _LocalHistory:
    """``core.storage.history.versions`` of a project whose backend keeps its documents as files (no settings model needed)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def list_versions(self, path: str | None = None) -> list[history.Version]:
        from core.storage.history import versions as history

        return history.list_versions(self.root, path)

    def get_version(self, version_id: int) -> tuple[history.Version, str] | None:
        from core.storage.history import versions as history

        return history.get_version(self.root, version_id)


@contextmanager
def _history_of(args: argparse.Namespace) -> Iterator[Any]:
    """Where the project's history is: the backend's own (``postgres``) through the project model, else
    ``core.storage.history.versions`` (for the file backends without building the project at all)."""
    root = project_root(args)
    if file_backend(root) is not None:
        yield _LocalHistory(root)
        return
    from core.cli.common import cli_project

    project = cli_project(args)
    try:
        yield project
    finally:
        project.close()


def _history_call(fn: Any, *args: Any) -> Any:
    """Call a history function; a damaged or unreadable database (or an unreachable server) is one line (exit 1)."""
    try:
        return fn(*args)
    except Exception as exc:
        raise fail_from(exc) from exc


def _version_or_fail(source: Any, version_id: int, path: str | None) -> tuple[history.Version, str]:
    found = _history_call(source.get_version, version_id)
    if found is None:
        raise CliError(f"no version {version_id} in the history (see 'memdesk history list')", 2)
    if path is not None and found[0].path != path:
        raise CliError(f"version {version_id} is of {found[0].path}, not {path}", 2)
    return found


def _history_path(root: Path, path: str | None) -> str | None:
    """``--file`` as ``show --file`` reads it: a bare ``2026-08-19.md`` or ``MEMORY.md`` names the
    project's document (design §2a); a path that is no memory document is kept as given (``--all``)."""
    if path is None:
        return None
    from core.documents.layout import Layout
    from core.errors import MemoryBackendError

    try:
        return Layout(root).normalize(path)
    except (MemoryBackendError, ValueError, OSError):
        return path


def cmd_history_list(args: argparse.Namespace) -> int:
    """List versions (id, time, label, author, size, file), memory documents only unless ``--all``."""
    from core.storage.history import versions as history

    root = project_root(args)
    args.path = _history_path(root, args.path)
    if args.appends:
        events = _history_call(history.list_events, root, args.path)
        if args.json:
            emit_json([{**e.__dict__, "label": e.label} for e in events])
            return 0
        if not events:
            print("No appends recorded.")
        for e in events:
            first = " ".join(e.text.split())[:60]
            print(f"{e.id:>6}  {e.created_at}  {e.label:<22} {e.author or '-':<16} {e.path}  {first}")
        return 0
    with _history_of(args) as source:
        versions = _history_call(source.list_versions, args.path)
    if not args.all and args.path is None:
        versions = [v for v in versions if history.is_memory_document(root, v.path)]
    if args.json:
        emit_json([{**v.__dict__, "label": v.label} for v in versions])
        return 0
    if not versions:
        print("No versions stored." if args.path is None else f"No versions of {args.path} stored.")
    for v in versions:
        print(f"{v.id:>6}  {v.created_at}  {v.label:<26} {v.author or '-':<16} {v.size:>9,} B  {v.path}")
    return 0


def _current(source: Any, root: Path, path: str) -> str:
    """The document's text now, through the project model (the one at hand, or one opened for it)."""
    if hasattr(source, "read"):
        return _history_call(source.read, path)
    from core.cli.common import cli_project

    project = cli_project(argparse.Namespace(project=str(root)))
    try:
        return _history_call(project.read, path)
    finally:
        project.close()


def cmd_history_show(args: argparse.Namespace) -> int:
    """Print a version's content, or with ``--diff`` the diff from it to the current content."""
    from core.storage.history import versions as history

    root = project_root(args)
    args.path = _history_path(root, args.path)
    with _history_of(args) as source:
        version, content = _version_or_fail(source, args.id, args.path)
        diff = None
        if args.diff:
            if not history.is_memory_document(root, version.path):
                raise CliError(f"version {version.id} is of {version.path!r}, which is not a memory document; "
                               "show it without --diff", 2)
            diff = history.unified_diff(content, _current(source, root, version.path), version.path,
                                        f"version {version.id}")
    if args.json:
        emit_json({**version.__dict__, "label": version.label, "content": content,
                   **({"diff": diff} if diff is not None else {})})
    elif diff is not None:
        sys.stdout.write(diff or f"Version {version.id} is the same as the current {version.path}.\n")
    else:
        sys.stdout.write(content)
    return 0


def cmd_history_restore(args: argparse.Namespace) -> int:
    """Restore a version of a memory document to its own path, through the project's backend."""
    from core.cli.common import cli_project
    from core.storage.history import versions as history

    root = project_root(args)
    args.path = _history_path(root, args.path)
    project = cli_project(args)
    try:
        version, content = _version_or_fail(project, args.id, args.path)
        if not history.is_memory_document(root, version.path):
            raise CliError(f"version {version.id} is of {version.path!r}, which is not a memory document of this "
                           "project; nothing was restored", 2)
        before = _history_call(project.read, version.path)
        _history_call(project.restore, version.id)
    finally:
        project.close()
    changed = before != content
    if args.json:
        emit_json({"restored": version.id, "path": version.path, "changed": changed})
    elif changed:
        print(f"Restored version {version.id} of {version.path} (the content it replaces is in the history).")
    else:
        print(f"{version.path} already has the content of version {version.id}; nothing changed.")
    return 0


def cmd_history_drop(args: argparse.Namespace) -> int:
    """Delete one version of memdesk's own history (the way out named when a damaged one is refused)."""
    from core.storage.history import versions as history

    dropped = _history_call(history.drop_version, project_root(args), args.id)
    if dropped is None:
        raise CliError(f"no version {args.id} in the history (see 'memdesk history list')", 2)
    if args.json:
        emit_json({"dropped": dropped.id, "path": dropped.path})
    else:
        print(f"Dropped version {dropped.id} of {dropped.path} from the history.")
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    """Rebuild the indexes; with ``--verify`` exit 1 when an entry cannot be found."""
    from core.cli.common import cli_project
    from core.project.reindex import reindex

    project = cli_project(args)
    try:
        report = reindex(project.backend, verify=args.verify)
    except Exception as exc:
        raise fail_from(exc) from exc
    finally:
        project.close()
    if args.json:
        emit_json(report.to_json())
    elif not report.indexed:
        print(f"Nothing to rebuild: {report.note}.")
    else:
        print(f"Rebuilt the index of {report.files} file(s): {report.entries} entries, {report.vectors} vectors "
              f"embedded, in {report.seconds:.2f} s.")
        if report.note:
            print(f"Note: {report.note}")
        if report.verify is not None:
            v = report.verify
            print(f"Verified: {v.keyword_checked} entries found by keyword, {v.vectors_checked} by vector"
                  + (f", {v.unsearchable} without searchable words" if v.unsearchable else "") + ".")
    if not report.ok:
        for problem in report.problems[:20]:
            print(f"memdesk: {problem}", file=sys.stderr)
        raise CliError(f"verification found {len(report.problems)} problem(s)", 1)
    return 0
