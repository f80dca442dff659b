"""``memdesk show``, ``write``, ``append`` and ``backends``: the memory itself and where it lives."""

from __future__ import annotations

import argparse
import sys

from core import fileio
from core.adapter import MemoryFileAdapter
from core.backends import default_registry
from core.cli.common import (
    CliError,
    add_common,
    emit_json,
    fail_from,
    project_backend,
    project_root,
    read_stdin_text,
)
from core.entries import append_memory_entry, tool_message
from core.settings import load_settings


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the memory commands."""
    p = add_common(subparsers.add_parser("show", help="print the project memory"))
    p.set_defaults(func=cmd_show)
    p = add_common(subparsers.add_parser("write", help="replace the project memory with stdin"))
    p.add_argument("--expect-hash", metavar="SHA256",
                   help="refuse (CONFLICT) unless the memory still has this content hash")
    p.set_defaults(func=cmd_write)
    p = add_common(subparsers.add_parser("append", help="append a dated entry (text argument or stdin)"))
    p.add_argument("text", nargs="?", help="entry text (read from stdin when omitted)")
    p.set_defaults(func=cmd_append)
    p = add_common(subparsers.add_parser("backends", help="list registered memory backends"))
    p.set_defaults(func=cmd_backends)


def cmd_show(args: argparse.Namespace) -> int:
    """Print the memory (or JSON with content, backend and hash)."""
    backend = project_backend(project_root(args))
    try:
        content = backend.read()
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        emit_json({"content": content, "backend": backend.id, "hash": fileio.content_hash(content),
                   "size": len(content.encode("utf-8")), "fallbackReason": backend.fallback_reason})
    else:
        sys.stdout.write(content)
    return 0


def cmd_write(args: argparse.Namespace) -> int:
    """Replace the memory with stdin through the adapter (previous version kept in history)."""
    content = read_stdin_text()
    backend = project_backend(project_root(args))
    outcome = MemoryFileAdapter(backend).write(content, expected_hash=args.expect_hash, source="cli-write")
    if not outcome.success:
        code = outcome.code or "WRITE_FAILED"
        raise CliError(outcome.error or "write failed", 2 if code in {"QUOTA_EXCEEDED", "READ_ONLY"} else 1)
    if args.json:
        emit_json({"success": True, "hash": fileio.content_hash(content), "size": len(content.encode("utf-8"))})
    else:
        print(f"Memory written ({len(content.encode('utf-8')):,} bytes)")
    return 0


def cmd_append(args: argparse.Namespace) -> int:
    """Append an entry with the seed-002 guards and print the tool's message."""
    root = project_root(args)
    text = args.text if args.text is not None else read_stdin_text()
    try:
        result = append_memory_entry(root, text)
    except Exception as exc:
        raise fail_from(exc) from exc
    message = tool_message(result)
    if args.json:
        emit_json({"status": result.status, "filePath": result.file_path, "message": message,
                   "archivedEntries": result.archived_entries})
    elif result.status == "skipped_empty":
        print(message, file=sys.stderr)
    else:
        print(message)
    return 2 if result.status == "skipped_empty" else 0


def cmd_backends(args: argparse.Namespace) -> int:
    """List registered backends with version, capabilities and the active one."""
    root = project_root(args)
    registry = default_registry()
    try:
        active = load_settings(root).memory_backend
    except Exception:
        active = None
    infos = registry.infos()
    if active is not None and (active == "postgres" or not registry.has(active)):
        # Says on stderr why the configured backend fell back to "file" (server down, unknown id...);
        # only where finding out writes nothing (initializing sqlite would create its database).
        project_backend(root).shutdown()
    if args.json:
        emit_json([{"id": i.id, "name": i.name, "version": i.version, "description": i.description,
                    "capabilities": sorted(i.capabilities), "note": i.note, "active": i.id == active,
                    "settingsSchema": i.settings_model.model_json_schema(by_alias=True)} for i in infos])
        return 0
    for i in infos:
        mark = "*" if i.id == active else " "
        note = f"  ({i.note})" if i.note else ""
        print(f"{mark} {i.id:<10} {i.name} {i.version}  [{', '.join(sorted(i.capabilities))}]{note}")
    return 0
