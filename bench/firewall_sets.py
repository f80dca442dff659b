"""The labelled sets in tests/data/firewall/, read for the tests and ``python -m bench firewall``."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "firewall"


def read_labelled(name: str) -> list[tuple[str, str]]:
    """``(label, text)`` pairs of a ``LABEL<TAB>TEXT`` file, ``\\uXXXX`` escapes decoded."""
    pairs = []
    for raw in (DATA / name).read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        label, text = raw.split("\t", 1)
        if "\\u" in text or "\\U" in text:
            text = text.encode("ascii", "backslashreplace").decode("unicode_escape")
        pairs.append((label, text))
    return pairs
