"""Load rules as data: what a consumer (an agent) loads of a document, and how much of it.

A :class:`LoadRule` says which documents it applies to (globs over project-relative paths), the
limits that cut a document (lines, UTF-8 bytes, characters, UTF-16 code units, tokens; whichever
comes first), what is loaded (the head of the file, or its head and tail with the middle dropped) and
where the numbers come from. A :class:`Consumer` is a named list of rules: the first rule whose globs
match a document is used, and a document that matches none is read by the consumer's first rule, as if
it were that consumer's own memory file (the operator chose the consumer for it).

User-defined consumers (``consumers: {id: rule}`` in the user's config) are :class:`UserConsumer`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from core.documents.globs import glob_match

__all__ = ["CONSUMER_ID_RE", "Consumer", "LoadRule", "UserConsumer", "glob_match"]

CONSUMER_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
Tokenizer = Literal["estimate", "o200k_base", "cl100k_base"]
Unit = Literal["lines", "bytes", "chars", "utf16", "tokens"]
UNITS: tuple[Unit, ...] = ("lines", "bytes", "chars", "utf16", "tokens")
_LIMIT: dict[str, Any] = {"ge": 1, "le": 100_000_000}


class LoadRule(BaseModel):
    """How one consumer loads the documents matching ``applies_to``."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    what: str = Field(title="What is loaded", description="A few words: when and how the document is read.")
    applies_to: tuple[str, ...] = Field(
        ("**",), alias="appliesTo", title="Applies to",
        description="Globs over project-relative paths ('**' spans folders, '*' stays in one).")
    lines: int | None = Field(None, title="Lines", description="Loaded lines at most.", **_LIMIT)
    bytes: int | None = Field(None, title="Bytes", description="Loaded UTF-8 bytes at most.", **_LIMIT)
    chars: int | None = Field(None, title="Characters", description="Loaded characters at most.", **_LIMIT)
    utf16: int | None = Field(None, title="UTF-16 units",
                              description="Loaded UTF-16 code units at most (a JavaScript string's length).",
                              **_LIMIT)
    tokens: int | None = Field(None, title="Tokens", description="Loaded tokens at most.", **_LIMIT)
    tokenizer: Tokenizer = Field(
        "estimate", title="Tokenizer",
        description="How tokens are counted: 'estimate' is UTF-8 bytes / 4 rounded up (what Codex itself "
        "uses to cut); a tiktoken encoding is used when its file is available offline.")
    load: Literal["head", "head_tail"] = Field(
        "head", title="Loaded part",
        description="head: the start of the file up to the limit; head_tail: half the budget from the "
        "start and half from the end, the middle dropped.")
    trim: bool = Field(False, title="Trimmed first",
                       description="Leading and trailing white space is removed before counting.")
    whole_lines: bool = Field(False, alias="wholeLines", title="Cut between lines",
                              description="A size cut falls back to the end of the last whole line.")
    read_window: int | None = Field(
        None, alias="readWindow", title="Lines per read", ge=1, le=1_000_000,
        description="The document is loaded whole but an agent's read tool returns this many lines at a time.")
    source: str = Field("", title="Source", description="Where the limit comes from (a document or the code).")

    @field_validator("applies_to", mode="before")
    @classmethod
    def _one_glob(cls, value: object) -> object:
        return (value,) if isinstance(value, str) else value

    @field_validator("applies_to")
    @classmethod
    def _check_globs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("give at least one glob (use '**' for every document)")
        for glob in value:
            if not glob.strip() or glob.startswith("/") or ".." in glob.split("/"):
                raise ValueError(f"glob {glob!r} must be a relative path pattern without '..'")
        return value

    @model_validator(mode="after")
    def _check_head_tail(self) -> LoadRule:
        sizes = [unit for unit in self.limits() if unit != "lines"]
        if self.load == "head_tail" and (len(sizes) != 1 or self.lines is not None):
            raise ValueError("a head_tail rule takes exactly one size limit (bytes, chars, utf16 or tokens)")
        return self

    def limits(self) -> dict[Unit, int]:
        """The limits set on this rule, by unit."""
        return {unit: getattr(self, unit) for unit in UNITS if getattr(self, unit) is not None}

    def cuts(self) -> bool:
        """Whether this rule cuts documents at all (a rule with a read window only pages them)."""
        return bool(self.limits())

    def matches(self, relpath: str) -> bool:
        """Whether ``relpath`` matches one of the rule's globs."""
        return any(glob_match(glob, relpath) for glob in self.applies_to)


class Consumer(BaseModel):
    """A named reader of memory with its load rules (first matching rule wins)."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    id: str
    name: str
    rules: tuple[LoadRule, ...] = Field(min_length=1)
    builtin: bool = False

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not CONSUMER_ID_RE.match(value):
            raise ValueError(f"consumer id {value!r} must be lower-case letters, digits, '.', '_' or '-'")
        return value

    def rule_for(self, relpath: str) -> tuple[LoadRule, bool]:
        """The rule that reads ``relpath`` and whether it matched by its globs (False: the first rule,
        applied because the operator chose this consumer for the document)."""
        for rule in self.rules:
            if rule.matches(relpath):
                return rule, True
        return self.rules[0], False


class UserConsumer(LoadRule):
    """A consumer defined in the user's config: one rule and an optional display name."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    what: str = Field("user-defined rule", title="What is loaded")
    name: str | None = Field(None, title="Name", description="Shown in the meter (default: the id).")

    @model_validator(mode="after")
    def _needs_a_limit(self) -> UserConsumer:
        if not self.limits() and self.read_window is None:
            raise ValueError("a consumer needs a limit (lines, bytes, chars, utf16 or tokens) or a readWindow")
        return self

    def to_consumer(self, consumer_id: str) -> Consumer:
        """This rule as a :class:`Consumer` named ``consumer_id``."""
        rule = LoadRule.model_validate(self.model_dump(exclude={"name"}))
        return Consumer(id=consumer_id, name=self.name or consumer_id, rules=(rule,))

    def to_json(self) -> dict[str, object]:
        """The camelCase JSON of this rule, without unset fields."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_defaults=True)
