"""``memdesk search``, ``history list|show|restore`` and ``reindex``: finding memory and going back in time."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core import history
from core.backends import MemorySearchOptions
from core.cli.common import CliError, add_common, emit_json, fail_from, project_backend, project_root
from core.errors import MemoryBackendError
from core.project_memory import MEMORY_FILE_PATH
from core.reindex import reindex
from core.search.corpus import read_file


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the search, history and reindex commands."""
    p = add_common(subparsers.add_parser("search", help="search the memory, archive, insights and layered files"))
    p.add_argument("query", help="words to look for")
    p.add_argument("--mode", choices=("keyword", "semantic", "hybrid"), default="hybrid",
                   help="keyword (FTS5), semantic (meaning) or hybrid (both fused; default)")
    p.add_argument("--limit", type=_positive, default=10, metavar="N", help="at most N results (default 10)")
    p.set_defaults(func=cmd_search)

    h = subparsers.add_parser("history", help="list, show or restore earlier versions of memory files")
    hs = h.add_subparsers(dest="history_command", metavar="ACTION")
    p = add_common(hs.add_parser("list", help="list stored versions, newest first"))
    p.add_argument("--path", metavar="REL", help="only versions of this project-relative file")
    p.set_defaults(func=cmd_history_list)
    p = add_common(hs.add_parser("show", help="print a version (or its diff against now with --diff)"))
    p.add_argument("id", type=_positive, help="version id (from 'history list')")
    p.add_argument("--diff", action="store_true", help="print the diff from this version to the current content")
    p.add_argument("--path", metavar="REL", help="refuse unless the version is of this file")
    p.set_defaults(func=cmd_history_show)
    p = add_common(hs.add_parser("restore", help="make a version the current content (the replaced one is kept)"))
    p.add_argument("id", type=_positive, help="version id (from 'history list')")
    p.add_argument("--path", metavar="REL", help="refuse unless the version is of this file")
    p.set_defaults(func=cmd_history_restore)
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


def _usage(parser: argparse.ArgumentParser) -> int:
    raise CliError(f"{parser.prog}: choose an action: list, show ID or restore ID", 2)


def cmd_search(args: argparse.Namespace) -> int:
    """Print the results: ``file:line  [section]  score  snippet`` (or JSON)."""
    root = project_root(args)
    if not args.query.strip():
        raise CliError("the query is empty; give words to look for", 2)
    backend = project_backend(root)
    try:
        if not backend.has_capability("search"):
            raise MemoryBackendError(f'the "{backend.id}" backend cannot search; choose the sqlite or hybrid '
                                     "backend (memdesk settings set memoryBackend hybrid)",
                                     "CAPABILITY_UNSUPPORTED", backend.id)
        results = backend.search(args.query, MemorySearchOptions(limit=args.limit, mode=args.mode))
        note_fn = getattr(backend, "search_note", None)
        note = note_fn(args.mode) if callable(note_fn) else None
    except Exception as exc:
        raise fail_from(exc) from exc
    finally:
        backend.shutdown()
    if args.json:
        emit_json({"query": args.query, "mode": args.mode, "backend": backend.id, "note": note,
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


def _version_or_fail(root: Path, version_id: int, path: str | None) -> tuple[history.Version, str]:
    found = history.get_version(root, version_id)
    if found is None:
        raise CliError(f"no version {version_id} in the history (see 'memdesk history list')", 2)
    if path is not None and found[0].path != path:
        raise CliError(f"version {version_id} is of {found[0].path}, not {path}", 2)
    return found


def cmd_history_list(args: argparse.Namespace) -> int:
    """List versions: id, time, source, size and file."""
    root = project_root(args)
    versions = history.list_versions(root, args.path)
    if args.json:
        emit_json([v.__dict__ for v in versions])
        return 0
    if not versions:
        print("No versions stored." if args.path is None else f"No versions of {args.path} stored.")
    for v in versions:
        print(f"{v.id:>6}  {v.created_at}  {v.source:<14} {v.size:>9,} B  {v.path}")
    return 0


def _current(root: Path, path: str) -> str:
    if path == MEMORY_FILE_PATH:
        backend = project_backend(root)
        try:
            return backend.read()
        except Exception as exc:
            raise fail_from(exc) from exc
        finally:
            backend.shutdown()
    try:
        return read_file(root, path) or ""
    except Exception as exc:
        raise fail_from(exc) from exc


def cmd_history_show(args: argparse.Namespace) -> int:
    """Print a version's content, or with ``--diff`` the diff from it to the current content."""
    root = project_root(args)
    version, content = _version_or_fail(root, args.id, args.path)
    diff = history.unified_diff(content, _current(root, version.path), version.path,
                                f"version {version.id}") if args.diff else None
    if args.json:
        emit_json({**version.__dict__, "content": content, **({"diff": diff} if diff is not None else {})})
    elif diff is not None:
        sys.stdout.write(diff or f"Version {version.id} is the same as the current {version.path}.\n")
    else:
        sys.stdout.write(content)
    return 0


def cmd_history_restore(args: argparse.Namespace) -> int:
    """Restore a version (through the backend for the working memory); the replaced content is kept."""
    root = project_root(args)
    version, _content = _version_or_fail(root, args.id, args.path)
    backend = project_backend(root) if version.path == MEMORY_FILE_PATH else None
    try:
        if backend is not None and not backend.has_capability("write"):
            raise MemoryBackendError(f'the "{backend.id}" backend cannot write; nothing was restored',
                                     "READ_ONLY", backend.id)
        result = history.restore_version(root, version.id, backend=backend)
    except Exception as exc:
        raise fail_from(exc) from exc
    finally:
        if backend is not None:
            backend.shutdown()
    if args.json:
        emit_json({"restored": version.id, "path": result.path, "changed": result.changed})
    elif result.changed:
        print(f"Restored version {version.id} of {result.path} (the content it replaced is in the history).")
    else:
        print(f"{result.path} already has the content of version {version.id}; nothing changed.")
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    """Rebuild the indexes; with ``--verify`` exit 1 when an entry cannot be found."""
    root = project_root(args)
    backend = project_backend(root)
    try:
        report = reindex(backend, verify=args.verify)
    except Exception as exc:
        raise fail_from(exc) from exc
    finally:
        backend.shutdown()
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
