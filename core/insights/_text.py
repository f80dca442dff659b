"""Text helpers shared by the insights modules: JavaScript-compatible trimming, ISO dates, bullet matching.

Fusion is TypeScript, so where its output must be byte-compatible we trim with the white-space set of
``String.prototype.trim`` and format timestamps like ``Date.prototype.toISOString``.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime

# The characters JavaScript's String.prototype.trim removes (WhiteSpace + LineTerminator).
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
SOURCE_MARKER = " (source: "
_COMMENT_RE = re.compile(r"<!--[\s\S]*?(?:-->|\Z)")
_TOKEN_RE = re.compile(r"\S+")


def js_trim(text: str) -> str:
    """Trim ``text`` exactly as JavaScript's ``String.prototype.trim`` does."""
    return text.strip(JS_WHITESPACE)


def scrub_surrogates(text: str) -> str:
    """Replace lone surrogates (valid in JSON, not in UTF-8) with U+FFFD, as Node does when writing."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def to_utc(moment: datetime) -> datetime:
    """Return ``moment`` in UTC; a naive datetime is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def iso_timestamp(moment: datetime | None = None) -> str:
    """Format ``moment`` (default: now) like JavaScript's ``toISOString()``: ``2024-05-01T02:00:00.000Z``."""
    dt = to_utc(moment or datetime.now(UTC))
    return f"{dt:%Y-%m-%dT%H:%M:%S}.{dt.microsecond // 1000:03d}Z"


def utc_day(today: date | datetime | str | None = None) -> str:
    """Return the UTC calendar day ``YYYY-MM-DD`` of ``today`` (default: now); a string is used as is."""
    if isinstance(today, str):
        return today
    if isinstance(today, datetime):
        return to_utc(today).date().isoformat()
    if isinstance(today, date):
        return today.isoformat()
    return datetime.now(UTC).date().isoformat()


def parse_timestamp(value: str | datetime | None) -> datetime | None:
    """Parse an ISO-8601 timestamp (``Z`` allowed) into an aware UTC datetime; ``None`` when unparseable."""
    if isinstance(value, datetime):
        return to_utc(value)
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return to_utc(datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
    except ValueError:
        return None


def format_time_ago(then: datetime, now: datetime) -> str:
    """Say how long ago ``then`` was, as Fusion does: ``just now``, ``5 minutes ago``, ``1 day ago``."""
    diff_ms = (to_utc(now) - to_utc(then)).total_seconds() * 1000
    minutes = math.floor(diff_ms / 60_000)
    hours = math.floor(diff_ms / 3_600_000)
    days = math.floor(diff_ms / 86_400_000)
    if minutes < 1:
        return "just now"
    if minutes < 60:
        return f"{minutes} minute{'' if minutes == 1 else 's'} ago"
    if hours < 24:
        return f"{hours} hour{'' if hours == 1 else 's'} ago"
    return f"{days} day{'' if days == 1 else 's'} ago"


def normalize_content(text: str) -> str:
    """Fold case and collapse white-space runs: the key under which two insights are the same."""
    return " ".join(text.casefold().split())


def one_line(text: str) -> str:
    """``text`` as one line of markdown that cannot change the file's structure.

    Every run of white space (newlines, ``\r``, U+2028/U+2029, U+0085, vertical tab, form feed, ...)
    becomes one space, so the text can start no heading, list or code block of its own; ``<!--`` and
    ``-->`` become ``&lt;!--`` and ``--&gt;`` (shown the same in a preview), so it can open or close no
    comment that would hide the sections after it.
    """
    return neutralise_comments(" ".join(text.split()))


def neutralise_comments(text: str) -> str:
    """``text`` with HTML comment markers written as entities (the form :func:`one_line` stores)."""
    return text.replace("<!--", "&lt;!--").replace("-->", "--&gt;")


def render_bullet(content: str, source: str | None) -> str:
    """Render one insight as Fusion does: ``- <content>`` plus `` (source: <source>)`` when given."""
    line = f"- {content}"
    if source:
        line += f"{SOURCE_MARKER}{source})"
    return line


def bullet_keys(rendered_text: str) -> set[str]:
    """Every key a bullet text (after ``- ``) may stand for: whole, and before each source suffix."""
    norm = normalize_content(rendered_text)
    keys = {norm}
    start = norm.find(SOURCE_MARKER)
    while start != -1:
        keys.add(norm[:start])
        start = norm.find(SOURCE_MARKER, start + 1)
    return keys


class BulletIndex:
    """Finds ``- `` bullets of a text by content, ignoring case, white-space runs and a source suffix.

    A bullet matches ``content`` when, after its ``-`` marker (first on its line, any indentation),
    the text's tokens are exactly the content's tokens and the bullet then ends: the rest of the
    line is blank or is a `` (source: …)`` suffix. So ``use locks`` does not match
    ``- use locks carefully``. Bullets may sit in any section and span lines. The text is
    tokenized once and bullets are hashed by their first line, so looking up many insights in a
    large file stays fast.
    """

    def __init__(self, text: str) -> None:
        self._text = text.casefold()
        matches = list(_TOKEN_RE.finditer(self._text))
        self._tokens = [m.group() for m in matches]
        self._ends = [m.end() for m in matches]
        # Whole-bullet keys ending on the marker's line, and first lines of bullets that may run on.
        self._line_keys: set[tuple[str, ...]] = set()
        self._first_lines: dict[tuple[str, ...], list[int]] = {}
        for i, match in enumerate(matches[:-1]):
            if match.group() == "-" and self._at_line_start(match.start()):
                self._index_bullet(i + 1, matches)
        self._first_line_lengths = sorted({len(key) for key in self._first_lines})

    def _index_bullet(self, start: int, matches: list[re.Match[str]]) -> None:
        line_end = self._text.find("\n", matches[start - 1].end())
        if line_end == -1:
            line_end = len(self._text)
        stop = start
        while stop < len(matches) and matches[stop].start() < line_end:
            if self._text.startswith("(source: ", matches[stop].start()) and stop > start:
                self._line_keys.add(tuple(self._tokens[start:stop]))
            stop += 1
        first_line = tuple(self._tokens[start:stop])  # empty when the text starts on the next line
        if first_line:
            self._line_keys.add(first_line)
        self._first_lines.setdefault(first_line, []).append(start)

    def _at_line_start(self, pos: int) -> bool:
        text = self._text
        j = pos - 1
        while j >= 0 and text[j] != "\n" and text[j].isspace():
            j -= 1
        return j < 0 or text[j] == "\n"

    def _ends_bullet(self, end: int) -> bool:
        text = self._text
        j = end
        while j < len(text) and text[j] != "\n" and text[j].isspace():
            j += 1
        if j == len(text) or text[j] == "\n":
            return True
        return j > end and text.startswith("(source: ", j)

    def contains(self, content: str) -> bool:
        """True when a bullet of the text has ``content`` (see the class docstring); comment markers in
        ``content`` match the entities an insight is stored with (:func:`one_line`)."""
        tokens = neutralise_comments(content).casefold().split()
        if not tokens:
            return False
        key = tuple(tokens)
        if key in self._line_keys:
            return True
        count = len(tokens)
        for length in self._first_line_lengths:
            if length >= count:
                break
            for start in self._first_lines.get(key[:length], ()):
                if self._tokens[start : start + count] == tokens and self._ends_bullet(self._ends[start + count - 1]):
                    return True
        return False


def blank_comments(text: str) -> str:
    """Remove HTML comments (``<!-- … -->``, unclosed ones run to the end), keeping their newlines."""
    return _COMMENT_RE.sub(lambda m: "\n" * m.group().count("\n"), text)


def split_source(text: str) -> tuple[str, str | None]:
    """Split a bullet's text into content and source at the last `` (source: …)`` suffix."""
    stripped = text.rstrip()
    if stripped.endswith(")"):
        idx = stripped.rfind(SOURCE_MARKER)
        if idx > 0:
            source = stripped[idx + len(SOURCE_MARKER):-1].strip()
            if source:
                return stripped[:idx].rstrip(), source
    return stripped, None
