"""Token counts: a real tokenizer when one loads offline, else an estimate that says so.

``tiktoken`` downloads its BPE files on first use; memdesk never lets it. An encoding is used only
when its file is already in tiktoken's cache (``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR`` or
``<tmp>/data-gym-cache``, as tiktoken looks them up). Otherwise tokens are estimated as UTF-8 bytes / 4,
rounded up — the estimate Codex itself uses when it cuts its memory summary, so for Codex it is the
rule, not an approximation of it.
"""

from __future__ import annotations

import math
import os
from functools import lru_cache
from pathlib import Path

__all__ = ["ESTIMATE_NOTE", "TokenCounter", "token_counter"]

BYTES_PER_TOKEN = 4
ESTIMATE_NOTE = "tokens ≈ estimated as UTF-8 bytes / 4 (the estimate Codex uses to cut)"
_BLOBS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


class TokenCounter:
    """Counts tokens and finds how many characters fit in a token budget."""

    def __init__(self, name: str, encoding: object | None = None, note: str = "") -> None:
        self.name = name
        self._enc = encoding
        self.note = note

    @property
    def estimated(self) -> bool:
        """True when the count is the bytes/4 estimate rather than a tokenizer's."""
        return self._enc is None

    def count(self, text: str) -> int:
        """Tokens in ``text``."""
        if self._enc is None:
            size = len(text) if text.isascii() else len(text.encode("utf-8"))
            return math.ceil(size / BYTES_PER_TOKEN)
        return len(self._enc.encode(text, disallowed_special=()))  # type: ignore[attr-defined]

    def prefix_chars(self, text: str, tokens: int) -> int:
        """How many leading characters of ``text`` fit in ``tokens``."""
        if self._enc is None:
            n = tokens * BYTES_PER_TOKEN
            return min(n, len(text)) if text.isascii() else len(
                text[:n].encode("utf-8")[:n].decode("utf-8", "ignore"))
        ids = self._enc.encode(text, disallowed_special=())  # type: ignore[attr-defined]
        if len(ids) <= tokens:
            return len(text)
        return len(self._enc.decode_bytes(ids[:tokens]).decode("utf-8", "ignore"))  # type: ignore[attr-defined]

    def suffix_chars(self, text: str, tokens: int) -> int:
        """How many trailing characters of ``text`` fit in ``tokens``."""
        if self._enc is None:
            n = tokens * BYTES_PER_TOKEN
            return min(n, len(text)) if text.isascii() else len(
                text[-n:].encode("utf-8")[-n:].decode("utf-8", "ignore"))
        ids = self._enc.encode(text, disallowed_special=())  # type: ignore[attr-defined]
        if len(ids) <= tokens:
            return len(text)
        return len(self._enc.decode_bytes(ids[-tokens:]).decode("utf-8", "ignore"))  # type: ignore[attr-defined]


def _cache_file(name: str) -> Path | None:
    blob = _BLOBS.get(name)
    if blob is None:
        return None
    import hashlib  # here, as tempfile: only a tiktoken count needs the cache folder
    import tempfile

    folder = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR") or str(
        Path(tempfile.gettempdir()) / "data-gym-cache")
    return Path(folder) / hashlib.sha1(blob.encode()).hexdigest()


@lru_cache(maxsize=8)
def _load(name: str, cache_key: str) -> TokenCounter:
    if name == "estimate":
        return TokenCounter("estimate", None, ESTIMATE_NOTE)
    path = _cache_file(name)
    if path is None or not path.is_file():
        return TokenCounter("estimate", None, f"tiktoken's {name} file is not available offline; {ESTIMATE_NOTE}")
    try:
        import tiktoken

        return TokenCounter(name, tiktoken.get_encoding(name))
    except Exception as exc:  # a broken cache file or an old tiktoken: fall back, and say why
        return TokenCounter("estimate", None, f"tiktoken's {name} did not load ({exc}); {ESTIMATE_NOTE}")


def token_counter(name: str = "estimate") -> TokenCounter:
    """The counter for ``name`` ('estimate', 'o200k_base', 'cl100k_base'); never downloads anything."""
    path = _cache_file(name)
    return _load(name, str(path) if path is not None and path.is_file() else "")
