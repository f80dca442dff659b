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


def bullet_pattern(content: str) -> re.Pattern[str] | None:
    """A pattern finding a ``- `` bullet whose text is ``content`` (case-folded, any white space).

    The bullet may sit anywhere (any section, indented) and may carry a `` (source: …)`` suffix; it
    must not continue with other text, so ``use locks`` does not match ``- use locks carefully``.
    Search it in ``text.casefold()``. ``None`` for blank content.
    """
    tokens = content.casefold().split()
    if not tokens:
        return None
    body = r"\s+".join(re.escape(token) for token in tokens)
    return re.compile(r"^[^\S\n]*-\s+" + body + r"(?=[^\S\n]*(?:\n|\Z)|[^\S\n]+\(source: )", re.M)


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
