"""How ``data/prefilter.json`` is made: each firewall rule's required strings, from Python's parse of its pattern.

Run ``python -m core.firewall.prefilter_build`` after changing a rule; a test checks the file is current.
:mod:`core.firewall.prefilter` reads the file at run time (this module is never imported on a write).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from core.firewall.prefilter import DATA_FILE


def _repeats() -> tuple[Any, ...]:
    from re import _constants as c  # type: ignore[attr-defined]

    return tuple(op for op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)) if op is not None)


_REPEATS: tuple[Any, ...] = ()

#: Syntax RE2 reads differently from Python's parser (POSIX classes, \Q..\E, \p, \C, \z...): not derived.
_UNREAD = ("[:", "\\Q", "\\E", "\\p", "\\P", "\\C", "\\z", "\\x{", "(?U", "(?s", "(?m")


#: Groups of strings kept per pattern (the most telling ones).
MAX_GROUPS = 3


def derive(pattern: str, *, ignore_case: bool = False) -> tuple[bool, list[list[str]]] | None:
    """``(fold, groups)``: every match of ``pattern`` holds one string of each group; ``fold`` when any part
    of it is matched ignoring case (every string is then lower case, to be looked for in the lower-cased
    text). ``None`` when no string can be named."""
    import re
    from re import _constants as c  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]

    if any(mark in pattern for mark in _UNREAD):
        return None
    try:
        parsed = _parser.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None
    global _REPEATS
    _REPEATS = _REPEATS or _repeats()
    flag = c.SRE_FLAG_IGNORECASE
    fold = ignore_case or bool(parsed.state.flags & flag)

    def scoped(items: Any) -> bool:  # any (?i:...) group inside
        for op, av in items:
            if op is c.SUBPATTERN and (av[1] & flag or scoped(av[3])):
                return True
            if op is c.BRANCH and any(scoped(alt) for alt in av[1]):
                return True
            if op in _REPEATS and scoped(av[2]):
                return True
        return False

    fold = fold or scoped(parsed)

    def ranked(options: list[set[str]]) -> list[set[str]]:
        options = [o for o in options if o and all(o)]
        return sorted(options, key=lambda o: (-min(len(s) for s in o), len(o), sorted(o)))

    def best(options: list[set[str]]) -> set[str] | None:
        found = ranked(options)
        return found[0] if found else None

    def sequence(items: Any, top: bool = False) -> Any:
        options: list[set[str]] = []
        run = ""
        for op, av in items:
            if op is c.LITERAL:
                ch = chr(av)
                if fold and not ch.isascii():  # how RE2 folds a non-ASCII letter is left to RE2: no string
                    if run:
                        options.append({run})
                    run = ""
                else:
                    run += ch.lower() if fold else ch
                continue
            if run:
                options.append({run})
                run = ""
            if op is c.SUBPATTERN:
                found = sequence(av[3])
                if found:
                    options.append(found)
            elif op is c.BRANCH:
                alternatives = [sequence(alt) for alt in av[1]]
                if all(alternatives):
                    options.append(set().union(*alternatives))  # type: ignore[arg-type]
            elif op in _REPEATS and av[0] >= 1:
                found = sequence(av[2])
                if found:
                    options.append(found)
            # anything else (a class, ., an anchor, a back reference...) requires no string
        if run:
            options.append({run})
        if top:  # each required on its own: every match holds one string of each
            unique: list[set[str]] = []
            for option in ranked(options):
                if option not in unique:
                    unique.append(option)
            return unique[:MAX_GROUPS]
        return best(options)

    groups = sequence(parsed, top=True)
    return (fold, [sorted(g) for g in groups]) if groups else None


def rule_patterns() -> list[tuple[str, bool]]:
    """Every pattern the secret and injection rules compile, with whether it is matched ignoring case."""
    from core.firewall import ds_patterns, injection, secrets

    out = [(item["pattern"], bool(item["ignoreCase"])) for item in ds_patterns.load()["rules"]]  # type: ignore[attr-defined]
    out += [(pattern, False) for _name, _what, pattern in secrets.EXTRA_FORMATS]
    out += [(secrets._ASSIGNMENT, False), (secrets._SAID, False)]
    out += [(p, False) for p in (*injection._OVERRIDE, *injection._ROLE, *injection._EXFIL)]
    out += [(injection._COMMENT_DIRECTIVE, False), (injection._MARKERS, False)]
    return out


def build() -> dict[str, object]:
    """The data file's content: each rule pattern with its strings (empty when it has none: always compiled)."""
    rules = []
    for pattern, ignore_case in rule_patterns():
        found = derive(pattern, ignore_case=ignore_case)
        rules.append({"pattern": pattern, "ignoreCase": ignore_case, "fold": bool(found and found[0]),
                      "needles": found[1] if found else []})
    return {"about": "required strings of the firewall's rules (python -m core.firewall.prefilter_build)", "rules": rules}


if __name__ == "__main__":  # regenerate: python -m core.firewall.prefilter_build
    DATA_FILE.write_text(json.dumps(build(), indent=1) + "\n", encoding="utf-8")
    sys.stdout.write(f"wrote {DATA_FILE}\n")
