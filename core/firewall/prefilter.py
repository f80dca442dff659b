"""The rules' required words: a rule is compiled and run only on text that holds one of them.

Compiling the firewall's ~85 RE2 patterns costs a one-shot ``memdesk append`` about 7 ms, and loading
RE2 2.5 ms more: a tenth of the whole process, for an entry that nearly always matches none of them.
Most patterns cannot match without one of a few literal strings (``AKIA``, ``-----BEGIN``, ``token``,
``ignore``...). Those strings are worked out once from each pattern (:func:`core.firewall.prefilter_build.derive`, from
Python's own parse of it) and kept in ``data/prefilter.json`` (a test checks the file against the patterns), so a
rule whose strings are all absent from the screened text is neither compiled nor run: it could not
have matched. A pattern with no such string (or one this module cannot read, or a pattern changed
since the file was made) is always compiled, as before. The strings come in groups (up to three), each
required on its own: every match RE2 finds holds one string of each group
(``tests/core/firewall/test_prefilters.py`` checks it on every labelled example, every fixture line and
strings generated from each pattern).

Case: a case-sensitive rule's strings are looked for as they are; a case-insensitive rule's strings
are lower case and looked for in the lower-cased text. RE2 folds ``ſ`` (U+017F) with ``s`` where
``str.lower`` does not, so in a text holding one every case-insensitive rule is run.
"""

from __future__ import annotations

import json
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
        needles = self.needles
        if needles is None:
            return True
        if not self.fold:
            hay = text
        elif FOLDS_TO_ASCII in text:
            return True
        else:
            hay = text.lower() if lowered is None else lowered
        for group in needles:  # plain loops: ~85 rules are asked per write, generators cost 3x (measured)
            for needle in group:
                if needle in hay:
                    break
            else:
                return False
        return True

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
