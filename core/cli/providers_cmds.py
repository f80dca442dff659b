"""``memdesk providers``: the model providers in the user's own config (never a project's).

``list`` (the default) shows them, the default one and whether scheduled runs may apply a prune
unattended; ``set``, ``remove``, ``default`` and ``auto-apply-prune`` change them. Exit codes: 0
success, 1 failure, 2 bad input.
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from core.cli.common import CliError, add_action, add_common, emit_json, fail_from


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``providers`` and its actions."""
    p = subparsers.add_parser("providers", help="your model providers (user config, not the project's)")
    add_common(p)
    p.set_defaults(func=cmd_providers_list)
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    add_action(actions, "list", "list providers (default)").set_defaults(func=cmd_providers_list)
    a = add_action(actions, "set", "add or replace a provider")
    a.add_argument("name")
    a.add_argument("--kind", required=True, choices=("openai", "command", "offline"))
    a.add_argument("--base-url", help="openai: endpoint root, e.g. https://api.openai.com/v1")
    a.add_argument("--model", help="openai: model name")
    a.add_argument("--api-key-env", metavar="VAR", help="openai: environment variable holding the API key")
    a.add_argument("--command", dest="command_line", metavar="CMD", help="command: program and arguments (shell-quoted)")
    a.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="openai: how long each network step (connect, each read) may wait; command: how long the "
                        "command may run (default 120). A reply that trickles in is bounded by --deadline")
    a.add_argument("--deadline", type=float, metavar="SECONDS",
                   help="the longest a whole provider call may last, however slowly the reply arrives "
                        "(default 600)")
    a.add_argument("--prune-after-days", type=int, metavar="DAYS", help="offline: prune dated entries older than this")
    a.set_defaults(func=cmd_providers_set)
    a = add_action(actions, "remove", "remove a provider")
    a.add_argument("name")
    a.set_defaults(func=cmd_providers_remove)
    a = add_action(actions, "default", "choose the default provider")
    a.add_argument("name")
    a.set_defaults(func=cmd_providers_default)
    a = add_action(actions, "auto-apply-prune", "let scheduled runs apply valid prunes unattended")
    a.add_argument("state", choices=("on", "off"))
    a.set_defaults(func=cmd_auto_apply_prune)


def cmd_providers_list(args: argparse.Namespace) -> int:
    """List the user's providers, the default and the unattended-prune setting."""
    from core.settings.user_config import load_user_config, user_config_path

    try:
        config = load_user_config()
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        emit_json({**config.to_json(), "path": str(user_config_path())})
        return 0
    print(f"User config: {user_config_path()}")
    for name, cfg in config.providers.items():
        mark = "*" if name == config.default_provider else " "
        if cfg.kind == "openai":
            detail = f"{cfg.base_url} model={cfg.model} key=${cfg.api_key_env or '(none)'}"
        elif cfg.kind == "command":
            detail = shlex.join(cfg.command or [])
        else:
            detail = f"rule-based, prunes dated entries older than {cfg.prune_after_days} days"
        deadline = f" deadline={cfg.deadline_s:g}s" if cfg.deadline_s else ""
        print(f"{mark} {name:<12} {cfg.kind:<8} {detail}  timeout={cfg.timeout_s:g}s{deadline}")
    print(f"autoApplyPrune: {'on' if config.auto_apply_prune else 'off (prunes wait for review)'}")
    return 0


def _save(args: argparse.Namespace, action: Any, message: str) -> int:
    try:
        config = action()
    except Exception as exc:
        raise fail_from(exc) from exc
    if args.json:
        emit_json(config.to_json())
    else:
        print(message)
    return 0


def cmd_providers_set(args: argparse.Namespace) -> int:
    """Add or replace a provider in the user config."""
    from core.settings.user_config import set_provider

    data: dict[str, Any] = {"kind": args.kind}
    for key, value in (("baseUrl", args.base_url), ("model", args.model), ("apiKeyEnv", args.api_key_env),
                       ("timeoutS", args.timeout), ("deadlineS", args.deadline),
                       ("pruneAfterDays", args.prune_after_days)):
        if value is not None:
            data[key] = value
    if args.command_line is not None:
        try:
            data["command"] = shlex.split(args.command_line)
        except ValueError as exc:
            raise CliError(f"--command: {exc}", 2) from exc
    return _save(args, lambda: set_provider(args.name, data), f"Provider {args.name!r} saved")


def cmd_providers_remove(args: argparse.Namespace) -> int:
    """Remove a provider from the user config."""
    from core.settings.user_config import remove_provider

    return _save(args, lambda: remove_provider(args.name), f"Provider {args.name!r} removed")


def cmd_providers_default(args: argparse.Namespace) -> int:
    """Choose the default provider."""
    from core.settings.user_config import set_default_provider

    return _save(args, lambda: set_default_provider(args.name), f"Default provider: {args.name}")


def cmd_auto_apply_prune(args: argparse.Namespace) -> int:
    """Turn unattended prunes on or off."""
    from core.settings.user_config import set_auto_apply_prune

    on = args.state == "on"
    return _save(args, lambda: set_auto_apply_prune(on),
                 "autoApplyPrune: on — scheduled runs apply valid, current prunes" if on
                 else "autoApplyPrune: off — prunes wait for review")
