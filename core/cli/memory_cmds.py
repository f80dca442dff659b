"""``memdesk show``, ``write``, ``append``, ``files``, ``migrate`` and ``backends``: the memory documents.

Every command works through :class:`core.project.Project`, so reads and writes go through the
project's backend. ``show``, ``files`` and ``backends`` only read: they create no file or folder.
"""

from __future__ import annotations

import argparse
import sys

from core.cli.common import (
    CliError,
    add_common,
    add_file_option,
    cli_path,
    cli_project,
    emit_json,
    fail_from,
    project_root,
    read_stdin_text,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the memory commands."""
    p = add_file_option(add_common(subparsers.add_parser("show", help="print a memory document")))
    p.set_defaults(func=cmd_show)
    p = add_file_option(add_common(subparsers.add_parser("write", help="replace a memory document with stdin")))
    p.add_argument("--expect-hash", metavar="SHA256",
                   help="refuse (CONFLICT) unless the document still has this content hash")
    p.add_argument("--allow-empty", action="store_true",
                   help="allow replacing the document with nothing (refused by default: an empty stdin "
                        "is usually a failed producer in a pipe)")
    p.set_defaults(func=cmd_write)
    p = add_file_option(add_common(subparsers.add_parser(
        "append", help="append an entry (text argument or stdin); skips empty and duplicate entries")))
    p.add_argument("text", nargs="?", help="entry text (read from stdin when omitted)")
    p.add_argument("--layer", choices=("long-term", "daily"), default=None,
                   help="layered projects: MEMORY.md (long-term) or today's daily note (daily, the default)")
    p.add_argument("--agent", metavar="ID", default=None, help="layered projects: that agent's own memory")
    p.add_argument("--force", action="store_true", help="append even when memory is switched off")
    p.set_defaults(func=cmd_append)
    p = add_common(subparsers.add_parser("files", help="list the project's memory documents"))
    p.set_defaults(func=cmd_files)
    p = add_common(subparsers.add_parser(
        "migrate", help="move a legacy .fusion/memory.md into MEMORY.md (dry run: prints the diff)"))
    p.add_argument("--apply", action="store_true", help="write the result (both versions kept in history)")
    p.set_defaults(func=cmd_migrate)
    p = add_common(subparsers.add_parser("backends", help="list registered memory backends"))
    p.set_defaults(func=cmd_backends)


def cmd_show(args: argparse.Namespace) -> int:
    """Print a document (or JSON with content, path, backend and hash)."""
    from core.cli.light import file_backend, read_document

    root = project_root(args)
    backend_id = file_backend(root)
    if backend_id is not None:  # the file backends read plain files: no project model needed (fast start)
        from core.documents.layout import Layout

        layout = Layout(root)
        try:
            rel = layout.normalize(args.file) if args.file else layout.memory_path
        except Exception as exc:
            raise CliError(f"--file: {getattr(exc, 'message', exc)}", 2) from exc
        try:
            content, fallback = read_document(root, rel, backend_id), None
        except Exception as exc:
            raise fail_from(exc) from exc
    else:
        project = cli_project(args)
        rel = cli_path(project, args)
        try:
            content = project.read(rel)
        except Exception as exc:
            raise fail_from(exc) from exc
        backend_id, fallback = project.backend.id, project.fallback_reason
    if args.json:
        from core.storage import fileio

        emit_json({"path": rel, "content": content, "backend": backend_id,
                   "hash": fileio.content_hash(content), "size": len(content.encode("utf-8")),
                   "fallbackReason": fallback})
    else:
        sys.stdout.write(content)
    return 0


def cmd_write(args: argparse.Namespace) -> int:
    """Replace a document with stdin through the backend (previous version kept in history)."""
    project = cli_project(args)
    rel = cli_path(project, args)
    content = read_stdin_text()
    if not content.strip() and not args.allow_empty:
        raise CliError(f"standard input is empty; refusing to replace {rel} with nothing (nothing was written). "
                       "Pass --allow-empty to do it on purpose", 2)
    try:
        result = project.write(rel, content, expected_hash=args.expect_hash, source="cli-write")
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        emit_json({"success": True, "path": rel, "changed": result.changed, "hash": result.hash,
                   "size": result.size, "warnings": list(result.warnings)})
    else:
        print(f"Memory written ({result.size:,} bytes) to {rel}" if result.changed
              else f"{rel} already has this content; nothing changed")
        for warning in result.warnings:
            print(f"warning: {warning}", file=sys.stderr)
    return 0


def cmd_append(args: argparse.Namespace) -> int:
    """Append an entry with seed 002's guards and print the tool's message."""
    from core.project.model import MemoryDisabledError

    project = cli_project(args, light=True)
    text = args.text if args.text is not None else read_stdin_text()
    path = cli_path(project, args) if args.file is not None else None
    try:
        outcome = project.append(text, layer=args.layer, agent=args.agent, path=path, force=args.force,
                                 source="cli-append")
    except MemoryDisabledError as exc:
        raise CliError(exc.message, 1) from exc
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        emit_json(outcome.to_json())
    elif outcome.status == "skipped_empty":
        print(outcome.message, file=sys.stderr)
    else:
        print(outcome.message)
        for warning in outcome.warnings:
            print(f"warning: {warning}")
    return 2 if outcome.status == "skipped_empty" else 0


def cmd_files(args: argparse.Namespace) -> int:
    """List the documents in design §2a order: path, label, layer, agent, size, last change, legacy."""
    project = cli_project(args)
    try:
        docs = project.documents()
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        emit_json([d.to_json() for d in docs])
        return 0
    if not docs:
        print(f"No memory documents in {project.root} ({project.layout.kind} layout).")
    for d in docs:
        size = f"{d.size:,} B" if d.size is not None else "-"
        flag = "  (legacy: not read by Fusion)" if d.legacy else ""
        print(f"{d.layer:<10} {size:>12}  {d.updated_at or '-':<20}  {d.path}{flag}")
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    """Print (or with ``--apply`` write) the migration of a legacy ``.fusion/memory.md`` into MEMORY.md."""
    from core.project.migrate import apply_migration, plan_migration

    project = cli_project(args)
    try:
        plan = plan_migration(project)
    except Exception as exc:
        raise fail_from(exc) from exc
    if plan is None:  # nothing to do is a success, said on stdout
        message = ("Nothing to migrate: this project has no legacy .fusion/memory.md beside .fusion/memory/ "
                   "(only layered projects have one).")
        if args.json:
            emit_json({"applied": False, "moved": 0, "nothingToMigrate": True, "message": message})
        else:
            print(message)
        return 0
    if not args.apply:
        if args.json:
            emit_json({"applied": False, "target": plan.target, "moved": plan.moved, "diff": plan.diff,
                       "missing": list(plan.missing)})
        else:
            sys.stdout.write(plan.diff or "The legacy file adds nothing to MEMORY.md.\n")
            print(f"\n{plan.moved} line(s) would move into {plan.target}. Run with --apply to write it.")
            if plan.missing:
                print(f"warning: {len(plan.missing)} line(s) of the legacy file would not be kept, so --apply "
                      "will refuse; move them by hand", file=sys.stderr)
        return 0
    try:
        apply_migration(project, plan)
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        emit_json({"applied": True, "target": plan.target, "moved": plan.moved})
    else:
        print(f"Moved {plan.moved} line(s) into {plan.target}; the legacy file is gone, and both old versions "
              "are in the history (`memdesk history list`).")
    return 0


def cmd_backends(args: argparse.Namespace) -> int:
    """List registered backends with version, capabilities, the active one and any fallback reason."""
    project = cli_project(args) if project_root(args) else None
    assert project is not None
    infos = project.registry.infos()
    active = project.backend.id
    if args.json:
        emit_json([{"id": i.id, "name": i.name, "version": i.version, "description": i.description,
                    "capabilities": sorted(i.capabilities), "note": i.note, "active": i.id == active,
                    "fallbackReason": project.fallback_reason if i.id == active else None,
                    "settingsSchema": i.settings_model.model_json_schema(by_alias=True)} for i in infos])
        return 0
    for i in infos:
        mark = "*" if i.id == active else " "
        note = f"  ({i.note})" if i.note else ""
        print(f"{mark} {i.id:<10} {i.name} {i.version}  [{', '.join(sorted(i.capabilities))}]{note}")
    if project.fallback_reason:
        print(f"\nfallback: {project.fallback_reason}")
    return 0
