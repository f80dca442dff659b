"""``memdesk settings get|set|unset``: read and change the project's settings where they live, naming the store.

Fusion's settings go to the project's store (Fusion's API, ``.fusion/fusion.db``, or ``config.json`` when
there is no Fusion store; :mod:`core.settings.store`), memdesk's own to ``.fusion/memdesk/settings.json``.
Every output names the store; ``get --json`` has it as ``store: {kind, name, path|url, readOnly}``.
"""

from __future__ import annotations

import argparse
import json
import sys

from core.cli.common import CliError, add_common, emit_json, fail_from, project_root
from core.errors import SettingsError
from core.settings.fusion_keys import check_fusion_value, fusion_key_type
from core.settings.model import ALIAS_TO_FIELD, FIELD_ALIASES, OWN_KEYS, ProjectSettings, read_settings
from core.settings.store.base import StoreInfo, StoreReadOnlyError
from core.settings.store.own import OWN_PATH
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
    if fusion_key_type(key) is not None:  # one of Fusion's other project settings (core.settings.fusion_keys)
        return key
    try:
        check_fusion_value(key, None)
    except SettingsError as exc:
        raise CliError(f"{exc}; memdesk's settings: {', '.join(sorted(ALIAS_TO_FIELD))}", 2) from exc
    raise CliError(f"unknown setting {key!r}", 2)  # pragma: no cover (check_fusion_value refused it)


def _dump(settings: ProjectSettings) -> dict:
    return settings.model_dump(by_alias=True)


def _where(key: str, info: StoreInfo) -> str:
    return f"memdesk's own settings {OWN_PATH}" if key in OWN_KEYS else info.plain_name


def _fail(exc: BaseException) -> CliError:
    if isinstance(exc, StoreReadOnlyError) or type(exc).__name__ == "FusionApiError":
        return CliError(str(exc), 1)  # not bad input: the store cannot take it now
    return fail_from(exc)


def cmd_get(args: argparse.Namespace) -> int:
    """Print every setting (or one) with defaults filled in, and the store they came from."""
    try:
        read = read_settings(project_root(args))
    except Exception as exc:
        raise _fail(exc) from exc
    values = _dump(read.settings)
    if args.key:
        key = _alias(args.key)
        value = values[key] if key in values else read.fusion_raw.get(key)
        print(json.dumps(value) if args.json or not isinstance(value, str) else value)
        print(f"memdesk: {key} from {_where(key, read.store)}", file=sys.stderr)
        return 0
    if args.json:
        emit_json({"store": read.store.to_json(), "own": {"path": OWN_PATH, "keys": sorted(OWN_KEYS)},
                   "settings": values})
    else:
        print(f"# Fusion's settings: {read.store.plain_name}"
              + (f" — read-only: {read.store.read_only}" if read.store.read_only else ""))
        print(f"# memdesk's own settings ({', '.join(sorted(OWN_KEYS))}): {OWN_PATH}")
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
    root = project_root(args)
    store = ProjectStore(root)
    try:
        updated = store.update_settings(patch)
        read = read_settings(root)
        info = read.store
    except Exception as exc:
        raise _fail(exc) from exc
    key = next(iter(patch))
    dumped = _dump(updated)
    value = dumped[key] if key in dumped else read.fusion_raw.get(key)
    if args.json:
        emit_json({key: value, "store": info.to_json() if key not in OWN_KEYS else {"kind": "memdesk", "path": OWN_PATH}})
    else:
        print(f"{key} = {json.dumps(value)}  (saved in {_where(key, info)})")
    return 0
