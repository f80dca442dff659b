"""``memdesk settings get|set|unset``: read and change ``.fusion/config.json`` through the model."""

from __future__ import annotations

import argparse
import json

from core.cli.common import CliError, add_common, emit_json, fail_from, project_root
from core.settings import ALIAS_TO_FIELD, FIELD_ALIASES, ProjectSettings
from core.store import ProjectStore


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``settings`` with its ``get``, ``set`` and ``unset`` actions."""
    p = subparsers.add_parser("settings", help="show or change project settings")
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    g = add_common(actions.add_parser("get", help="print all settings, or one KEY"))
    g.add_argument("key", nargs="?")
    g.set_defaults(func=cmd_get)
    s = add_common(actions.add_parser("set", help="set KEY to VALUE (JSON, or a plain string)"))
    s.add_argument("key")
    s.add_argument("value")
    s.set_defaults(func=cmd_set)
    u = add_common(actions.add_parser("unset", help="remove KEY (back to its default)"))
    u.add_argument("key")
    u.set_defaults(func=cmd_unset)
    p.set_defaults(func=lambda args: cmd_get(argparse.Namespace(**{**vars(args), "key": None}))
                   if hasattr(args, "project") else _usage(p))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _alias(key: str) -> str:
    if key in ALIAS_TO_FIELD:
        return key
    if key in FIELD_ALIASES:
        return FIELD_ALIASES[key]
    raise CliError(f"unknown setting {key!r}; known settings: {', '.join(sorted(ALIAS_TO_FIELD))}", 2)


def _dump(settings: ProjectSettings) -> dict:
    return settings.model_dump(by_alias=True)


def cmd_get(args: argparse.Namespace) -> int:
    """Print every setting (or one) with defaults filled in."""
    store = ProjectStore(project_root(args))
    try:
        values = _dump(store.settings())
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.key:
        key = _alias(args.key)
        value = values[key]
        print(json.dumps(value) if args.json or not isinstance(value, str) else value)
        return 0
    if args.json:
        emit_json(values)
    else:
        for key, value in values.items():
            print(f"{key} = {json.dumps(value)}")
    return 0


def _parse_value(raw: str):
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def cmd_set(args: argparse.Namespace) -> int:
    """Validate and save one setting; an invalid value changes nothing."""
    key = _alias(args.key)
    value = _parse_value(args.value)
    if value is None:
        raise CliError(f"use 'memdesk settings unset {key}' to remove a setting", 2)
    return _update(args, {key: value})


def cmd_unset(args: argparse.Namespace) -> int:
    """Remove one setting so its default applies."""
    return _update(args, {_alias(args.key): None})


def _update(args: argparse.Namespace, patch: dict) -> int:
    store = ProjectStore(project_root(args))
    try:
        updated = store.update_settings(patch)
    except Exception as exc:
        raise fail_from(exc) from exc
    key = next(iter(patch))
    value = _dump(updated)[key]
    if args.json:
        emit_json({key: value})
    else:
        print(f"{key} = {json.dumps(value)}")
    return 0
