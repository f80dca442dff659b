"""Which consumers exist (shipped and the user's own) and which of them read each document of a project.

The per-project choice is memdesk's own setting ``memdeskBudgetConsumers`` (in ``.fusion/memdesk/settings.json``):
``{document path: [consumer ids]}``. A document not listed is read by its defaults: Fusion for Fusion's
files (everything under ``.fusion/``), else the consumers whose globs match it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from core.budget import table as _table
from core.budget.table import DEFAULT_CONSUMER
from core.errors import SettingsError
from core.storage.userdirs import user_config_dir

if TYPE_CHECKING:  # both import pydantic; an append's budget check on the shipped consumers needs neither
    from core.budget.plain import PlainConsumer
    from core.budget.rules import Consumer
    from core.settings.model import ProjectSettings

__all__ = ["SETTING_KEY", "all_consumers", "chosen_consumer_ids", "chosen_consumers", "consumers_patch",
           "default_consumer_ids", "get_consumer", "plain_table", "resolve_consumers", "set_document_consumers"]

SETTING_KEY = "memdeskBudgetConsumers"


def all_consumers(user_consumers: Mapping[str, object] | None = None) -> dict[str, Consumer]:
    """Every consumer by id: the shipped ones, then the user's own (an id of a shipped one replaces it).

    ``user_consumers`` defaults to the ``consumers`` of the user's config; an unreadable user config
    leaves only the shipped consumers (the budget is advice; it must not stop a write).
    """
    out = {c.id: c for c in _table.BUILTIN_CONSUMERS}
    if user_consumers is None:
        try:
            from core.settings.user_config import (
                load_user_config,  # here: user_config imports core.budget.rules
            )

            user_consumers = load_user_config().consumers
        except SettingsError:
            user_consumers = {}
    for cid, rule in user_consumers.items():
        out[cid] = rule.to_consumer(cid)  # type: ignore[attr-defined]
    return out


def get_consumer(consumer_id: str, consumers: Mapping[str, Consumer] | None = None) -> Consumer:
    """The consumer ``consumer_id``; an unknown id raises :class:`SettingsError` listing the known ones."""
    table = consumers if consumers is not None else all_consumers()
    if consumer_id not in table:
        raise SettingsError(f"no consumer named {consumer_id!r}; known: {', '.join(table)}",
                            field=SETTING_KEY, reason="unknown consumer")
    return table[consumer_id]


def resolve_consumers(items: Iterable[str | Consumer], consumers: Mapping[str, Consumer] | None = None
                      ) -> list[Consumer]:
    """Consumers from ids or :class:`Consumer` objects (ids looked up once)."""
    table: Mapping[str, Consumer] | None = consumers
    out = []
    for item in items:
        if not isinstance(item, str):  # a Consumer (or the same data as a core.budget.plain.PlainConsumer)
            out.append(item)
            continue
        if table is None:
            table = all_consumers()
        out.append(get_consumer(item, table))
    return out


def default_consumer_ids(relpath: str, consumers: Mapping[str, Consumer] | None = None) -> list[str]:
    """Who reads ``relpath`` when the project has not said: Fusion for ``.fusion/`` files, else the
    consumers whose globs match it (Fusion when none does)."""
    if relpath.startswith(".fusion/"):
        return [DEFAULT_CONSUMER]
    table = consumers if consumers is not None else all_consumers()
    matching = [c.id for c in table.values()
                if any(r.matches(relpath) and r.applies_to != ("**",) for r in c.rules)]
    return matching or [DEFAULT_CONSUMER]


def chosen_consumer_ids(relpath: str, settings: ProjectSettings | None,
                        consumers: Mapping[str, Consumer] | None = None) -> list[str]:
    """The consumer ids chosen for ``relpath`` in the project's settings, else its defaults."""
    chosen = (settings.memdesk_budget_consumers if settings is not None else {}).get(relpath)
    return list(chosen) if chosen else default_consumer_ids(relpath, consumers)


def chosen_consumers(relpath: str, settings: ProjectSettings | None,
                     consumers: Mapping[str, Consumer] | None = None) -> list[Consumer]:
    """The consumers that read ``relpath`` (unknown ids in the settings are skipped, not fatal)."""
    table = consumers if consumers is not None else all_consumers()
    return [table[cid] for cid in chosen_consumer_ids(relpath, settings, table) if cid in table]


def consumers_patch(settings: ProjectSettings | None, relpath: str, ids: Iterable[str] | None,
                    consumers: Mapping[str, Consumer] | None = None) -> dict[str, object]:
    """The settings patch that makes ``ids`` the consumers of ``relpath`` (``None`` or empty: the defaults).

    Unknown ids raise :class:`SettingsError`.
    """
    table = consumers if consumers is not None else all_consumers()
    wanted = list(dict.fromkeys(i.strip() for i in (ids or ()) if i.strip()))
    for cid in wanted:
        get_consumer(cid, table)
    current = dict(settings.memdesk_budget_consumers) if settings is not None else {}
    if wanted:
        current[relpath] = wanted
    else:
        current.pop(relpath, None)
    return {SETTING_KEY: current or None}


def set_document_consumers(root: Path | str, relpath: str, ids: Iterable[str] | None) -> ProjectSettings:
    """Save which consumers read ``relpath`` (``None`` or empty: back to the defaults).

    Unknown ids raise :class:`SettingsError` and nothing is written.
    """
    from core.settings.model import (  # here: an append's budget check only reads
        load_settings,
        update_settings,
    )

    return update_settings(root, consumers_patch(load_settings(root), relpath, ids))


def user_config_path() -> Path:
    """The user's ``config.json`` (as :func:`core.settings.user_config.user_config_path`, without its models)."""
    return user_config_dir() / "config.json"


#: The answer for the config file last read: its path and identity (device, inode, size, mtime, ctime).
_DEFINES: dict[str, tuple[tuple[int, int, int, int, int], bool]] = {}


def user_defines_consumers() -> bool:
    """Whether the user's config may add consumers: it names a non-empty ``consumers``.

    A config that cannot be read or parsed gives none (``all_consumers`` then uses the shipped ones too).
    The same file as at the last read (one ``stat``: device, inode, size, mtime and ctime, all set more than
    2 s before that read) is not read and parsed again on each append (issue 19 item 7).
    """
    import os

    from core.storage import fileio
    from core.storage.safepath import settled

    path = user_config_path()
    try:
        st = os.stat(path)
        stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    except (FileNotFoundError, NotADirectoryError):  # no config: none of the user's consumers (read_text's None)
        return False
    except OSError:
        stamp = None
    known = _DEFINES.get(str(path))
    if stamp is not None and known is not None and known[0] == stamp:
        return known[1]
    try:
        text = fileio.read_text(path)
        doc = json.loads(text) if text and text.strip() else {}
    except Exception:  # unreadable or broken: load_user_config raises, and all_consumers keeps the shipped ones
        return False
    defines = isinstance(doc, dict) and bool(doc.get("consumers"))
    if stamp is not None and settled(st):
        _DEFINES[str(path)] = (stamp, defines)
    return defines


def plain_table() -> dict[str, PlainConsumer] | None:
    """The shipped consumers by id as plain data, or ``None`` when the user's config may define more."""
    if user_defines_consumers():
        return None
    return {c.id: c for c in _table.PLAIN_CONSUMERS}
