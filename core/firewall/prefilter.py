"""The rules' required words: a rule is compiled and run only on text that holds one of them.

Compiling the firewall's ~85 RE2 patterns costs a one-shot ``memdesk append`` about 7 ms, and loading
RE2 2.5 ms more: a tenth of the whole process, for an entry that nearly always matches none of them.
Most patterns cannot match without one of a few literal strings (``AKIA``, ``-----BEGIN``, ``token``,
``ignore``...). Those strings are worked out once from each pattern (:func:`derive`, from Python's own
parse of it) and kept in ``data/prefilter.json`` (a test checks the file against the patterns), so a
rule whose strings are all absent from the screened text is neither compiled nor run: it could not
have matched. A pattern with no such string (or one this module cannot read) is always compiled, as
before. What the strings must satisfy, and the tests that check it: every match RE2 finds contains
one of them (``tests/core/firewall/test_prefilters.py``, on every labelled example and on strings
generated from each pattern).

Case: a case-sensitive rule's strings are looked for as they are; a case-insensitive rule's strings
are lower case and looked for in the lower-cased text. RE2 folds ``ſ`` (U+017F) with ``s`` where
``str.lower`` does not, so in a text holding one every case-insensitive rule is run.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).with_name("data") / "prefilter.json"
#: Characters that RE2's case folding equates with an ASCII letter where ``str.lower`` does not.
FOLDS_TO_ASCII = "\u017f"


class LazyRule:
    """An RE2 pattern compiled on first use, with the strings one of which every match holds."""

    __slots__ = ("_regex", "fold", "ignore_case", "needles", "pattern")

    def __init__(self, pattern: str, *, ignore_case: bool = False) -> None:
        self.pattern = pattern
        self.ignore_case = ignore_case  # RE2's option (a pattern may also say (?i) itself)
        found = needles().get((pattern, ignore_case))
        #: Whether the strings are lower case, looked for in the lower-cased text (any part matched ignoring case).
        self.fold = bool(found and found[0])
        #: Groups of strings: every match holds one string of each group.
        self.needles: tuple[tuple[str, ...], ...] | None = tuple(map(tuple, found[1])) if found else None
        self._regex: Any = None

    def possible(self, text: str, lowered: str | None = None) -> bool:
        """``False`` only when the rule cannot match anywhere in ``text`` (``lowered`` is ``text.lower()``)."""
        if self.needles is None:
            return True
        if not self.fold:
            hay = text
        elif FOLDS_TO_ASCII in text:
            return True
        else:
            hay = text.lower() if lowered is None else lowered
        return all(any(n in hay for n in group) for group in self.needles)

    @property
    def regex(self) -> Any:
        """The compiled pattern (:func:`core.firewall.rules.compile_linear`)."""
        if self._regex is None:
            from core.firewall.rules import compile_linear

            self._regex = compile_linear(self.pattern, ignore_case=self.ignore_case)
        return self._regex

    def search(self, text: str) -> Any:
        return self.regex.search(text)

    def finditer(self, text: str) -> Any:
        return self.regex.finditer(text)


@cache
def needles() -> dict[tuple[str, bool], tuple[bool, list[list[str]]]]:
    """Each ``(pattern, ignore_case)``'s ``(fold, required strings)``, as stored."""
    try:
        data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
        return {(item["pattern"], bool(item["ignoreCase"])): (bool(item["fold"]), [list(g) for g in item["needles"]])
                for item in data["rules"] if item["needles"] and all(item["needles"])}
    except (OSError, ValueError, KeyError, TypeError):  # no usable file: every rule is compiled, as before
        return {}


# -- deriving the strings (at build time: python -m core.firewall.prefilter) --------------------------------

def _repeats() -> tuple[Any, ...]:
    from re import _constants as c

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
    from re import _constants as c
    from re import _parser

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
    return {"about": "required strings of the firewall's rules (python -m core.firewall.prefilter)", "rules": rules}


if __name__ == "__main__":  # regenerate: python -m core.firewall.prefilter
    DATA_FILE.write_text(json.dumps(build(), indent=1) + "\n", encoding="utf-8")
    sys.stdout.write(f"wrote {DATA_FILE}\n")
