"""The firewall's policy: per writer and per rule, allow / warn / hold / refuse.

Stored in memdesk's own state, ``.fusion/memdesk/firewall-policy.json`` (never in Fusion's settings):
``{"version": 1, "rules": {"<writer>": {"<rule or kind>": "<action>"}}}``. A writer is ``operator``,
``cli``, ``token``, ``mcp``, ``program``, ``memdesk``, one named writer (``token:ci-bot``,
``mcp:claude-code``), ``agents`` (every writer but the operator and memdesk) or ``*``. A rule is a
rule's name (``secret.aws-key``), its family (``injection``, ``secret``) or a kind. The most specific
writer and then the most specific rule decide; the defaults are the issue's: agents' secrets and
injection held, the operator's warned, near-duplicates and contradictions warned.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal, get_args

from core.errors import MemoryBackendError
from core.storage import fileio, statefiles
from core.storage.safepath import settled

Action = Literal["allow", "warn", "hold", "refuse"]
ACTIONS: tuple[str, ...] = get_args(Action)
#: How strongly an action stops a write: the strictest action among a write's flags decides.
SEVERITY = {"allow": 0, "warn": 1, "hold": 2, "refuse": 3}
POLICY_FILE = f"{fileio.MEMDESK_DIR}/firewall-policy.json"
WRITER_KINDS = ("operator", "cli", "token", "mcp", "program", "memdesk")
RULE_KEYS = ("secret", "injection", "near-duplicate", "contradiction")

DEFAULTS: dict[str, dict[str, Action]] = {
    "agents": {"secret": "hold", "injection": "hold", "near-duplicate": "warn", "contradiction": "warn",
               "error": "hold"},
    "operator": {"secret": "warn", "injection": "warn", "near-duplicate": "warn", "contradiction": "warn",
                 "error": "warn"},
    "memdesk": {"secret": "warn", "injection": "warn", "near-duplicate": "allow", "contradiction": "allow",
                "error": "warn"},
}


class PolicyError(ValueError):
    """A policy file or a policy change that is not valid; the message names what is wrong."""


def writer_keys(kind: str, name: str | None) -> list[str]:
    """The policy keys that apply to a writer, most specific first."""
    keys = [f"{kind}:{name}"] if name else []
    keys.append(kind)
    if kind not in ("operator", "memdesk"):
        keys.append("agents")
    keys.append("*")
    return keys


def rule_keys(rule: str, kind: str) -> list[str]:
    """The policy keys that apply to a rule, most specific first (``secret.aws-key``, ``secret``, kind)."""
    keys = [rule]
    family = rule.split(".", 1)[0]
    if family != rule:
        keys.append(family)
    if kind not in keys:
        keys.append(kind)
    return keys


def _check_writer(key: str) -> None:
    kind, _, name = key.partition(":")
    if key in ("agents", "*") or (kind in WRITER_KINDS and (not _ or name)):
        return
    raise PolicyError(f"unknown writer {key!r}: use one of {', '.join(WRITER_KINDS)}, agents, * or KIND:NAME")


def _check_rule(key: str) -> None:
    if key == "error" or key.split(".", 1)[0] in RULE_KEYS:
        return
    raise PolicyError(f"unknown rule {key!r}: use secret, injection, near-duplicate, contradiction, error "
                      "or a rule name such as secret.aws-key")


def _check_action(value: object, where: str) -> Action:
    if value not in ACTIONS:
        raise PolicyError(f"{where}: {value!r} is not one of {', '.join(ACTIONS)}")
    return value  # type: ignore[return-value]


class Policy:
    """The stored overrides on top of :data:`DEFAULTS`."""

    def __init__(self, rules: dict[str, dict[str, Action]] | None = None) -> None:  # not a dataclass: measured
        self.rules: dict[str, dict[str, Action]] = {} if rules is None else rules  # ~0.5 ms less at import

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Policy) and other.rules == self.rules

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it replaces

    def __repr__(self) -> str:
        return f"Policy(rules={self.rules!r})"

    def action(self, writer_kind: str, writer_name: str | None, rule: str, kind: str) -> Action:
        """What the policy says for this writer and rule."""
        writers = writer_keys(writer_kind, writer_name)
        rules = rule_keys(rule, kind)
        for table in (self.rules, DEFAULTS):
            for w in writers:
                for r in rules:
                    found = table.get(w, {}).get(r)
                    if found:
                        return found
        return "warn"

    def strictest(self, writer_kind: str, writer_name: str | None, flags: Iterable[tuple[str, str]]) -> Action:
        """The strictest action over ``(rule, kind)`` pairs (``allow`` for none)."""
        actions = [self.action(writer_kind, writer_name, rule, kind) for rule, kind in flags]
        return max(actions, key=SEVERITY.__getitem__, default="allow")

    def to_json(self) -> dict[str, object]:
        """The file's shape."""
        return {"version": 1, "rules": self.rules}

    @classmethod
    def from_json(cls, data: object) -> Policy:
        """Validate a stored policy; :class:`PolicyError` names the first bad entry."""
        if not isinstance(data, Mapping) or data.get("version") != 1 or not isinstance(data.get("rules"), Mapping):
            raise PolicyError('the policy must be {"version": 1, "rules": {WRITER: {RULE: ACTION}}}')
        rules: dict[str, dict[str, Action]] = {}
        for writer, table in data["rules"].items():
            _check_writer(str(writer))
            if not isinstance(table, Mapping):
                raise PolicyError(f"rules for {writer!r} must be an object of RULE: ACTION")
            for rule, value in table.items():
                _check_rule(str(rule))
                rules.setdefault(str(writer), {})[str(rule)] = _check_action(value, f"{writer} {rule}")
        return cls(rules)

    def effective(self) -> dict[str, dict[str, Action]]:
        """Every writer kind's action for every rule family, defaults filled in (what ``policy show`` prints)."""
        return {w: {r: self.action(w, None, r, r) for r in (*RULE_KEYS, "error")} for w in WRITER_KINDS}


_CACHE: dict[str, tuple[tuple[int, int, int], Policy]] = {}
#: What the last long way found, by the project's logical policy path: the file's identity (device, inode,
#: size, mtime) and its policy, or the folder's identity (device, inode, mtime, ctime) when there was no file.
_SEEN: dict[str, tuple[str, tuple[int, ...], Policy | None]] = {}


def load_policy(root: Path | str) -> Policy:
    """The project's policy (the defaults when there is no file); :class:`PolicyError` if the file is bad.

    Read again only when the file's inode, size or change time moved (a stat per write, not a parse).
    A write's usual case resolves nothing (two ``realpath`` calls, ~0.15 ms of an in-process append, issue 19
    item 7): a ``stat`` through the project's own path that finds the very file the long way read last
    (device, inode, size, mtime), or the very folder in which it found no file (its device, inode, mtime and
    ctime: adding, removing or renaming an entry changes them, and a link swapped in has another inode),
    answers from what that read found. Anything else takes the long way: resolved inside the root (a link
    out is refused), stat, read, parse."""
    logical = Path(root) / POLICY_FILE
    key = str(logical)
    seen = _SEEN.get(key)
    if seen is not None:
        try:
            if seen[0] == "file":
                st = os.stat(logical)
                hit = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == seen[1]
            else:
                st = os.stat(logical.parent)
                hit = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns) == seen[1]
        except OSError:
            hit = False
        if hit:
            policy = seen[2]
            return Policy() if policy is None else Policy({w: dict(t) for w, t in policy.rules.items()})
    return _load_policy(root, key)


def _load_policy(root: Path | str, key: str) -> Policy:
    path = Path(fileio.resolve_in_root(root, POLICY_FILE))
    try:
        folder = os.stat(path.parent)  # before the file's stat and read: a file made after it changes it
        none_seen = ("none", (folder.st_dev, folder.st_ino, folder.st_mtime_ns, folder.st_ctime_ns), None) \
            if settled(folder) else None
    except OSError:
        none_seen = None
    try:
        st = os.stat(path)
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        stamp = None
    cached = _CACHE.get(str(path))
    if stamp is not None and cached is not None and cached[0] == stamp:
        if settled(st):
            _SEEN[key] = ("file", (st.st_dev, *stamp), cached[1])
        return Policy({w: dict(t) for w, t in cached[1].rules.items()})
    try:
        data = fileio.read_text(path, max_size=256 * 1024)
    except MemoryBackendError as exc:
        raise PolicyError(f"{POLICY_FILE}: {exc}") from exc
    if data is None:
        if stamp is None and none_seen is not None:  # no file, and its folder as it was before the read
            _SEEN[key] = none_seen
        return Policy()
    policy = _parse(data)
    if stamp is not None:
        _CACHE[str(path)] = (stamp, policy)
    return Policy({w: dict(t) for w, t in policy.rules.items()})


def _parse(data: str) -> Policy:
    try:
        return Policy.from_json(json.loads(data))
    except json.JSONDecodeError as exc:
        raise PolicyError(f"{POLICY_FILE} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                          "fix or remove it") from exc
    except PolicyError as exc:
        raise PolicyError(f"{POLICY_FILE}: {exc}") from exc


def save_policy(root: Path | str, policy: Policy) -> Path:
    """Write the policy atomically into memdesk's state folder."""
    return statefiles.write("firewall-policy", root, json.dumps(policy.to_json(), indent=2, sort_keys=True) + "\n",
                            source="firewall-policy").target


def set_rule(root: Path | str, writer: str, rule: str, action: str | None) -> Policy:
    """Set (or, with ``None``, remove) one writer's action for one rule and save; return the new policy."""
    _check_writer(writer)
    _check_rule(rule)
    checked = None if action is None else _check_action(action, f"{writer} {rule}")
    with statefiles.lock("firewall-policy", root):  # read, change, write as one: the CLI and the app set rules too
        policy = load_policy(root)
        if checked is None:
            policy.rules.get(writer, {}).pop(rule, None)
            if writer in policy.rules and not policy.rules[writer]:
                del policy.rules[writer]
        else:
            policy.rules.setdefault(writer, {})[rule] = checked
        save_policy(root, policy)
    return policy
