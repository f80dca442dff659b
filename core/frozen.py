"""Frozen records with a frozen dataclass's manners at a fraction of its import cost (issue 19 item 7).

``@dataclass(frozen=True)`` generates and ``exec``\\ s each class's methods when its module is imported, about
half a millisecond a class; a ``memdesk append`` process builds a dozen such classes before it writes a byte.
A :class:`Record` subclass names its fields in ``__slots__`` (the same tuple as ``_fields``), writes its own
``__init__`` (positional or keyword arguments, defaults) that stores them with :meth:`Record._set`, and gets
equality and hashing over the fields, a ``Name(field=value, …)`` repr, pickling and frozen-ness (assigning or
deleting a field raises :class:`AttributeError`, as :class:`dataclasses.FrozenInstanceError` does).

A dataclass's ``field(repr=False)`` is a name in ``_hidden``, and ``field(compare=False)`` one in ``_uncompared``
(left out of equality and hashing). A value worked out when first asked (a dataclass's ``cached_property``) lives
in a slot that is not a field, set with :meth:`Record._set` (see ``WriteResult.hash``).
"""

from __future__ import annotations

from typing import Any


class Record:
    """The base of a frozen record: see the module's docstring."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _hidden: tuple[str, ...] = ()  # fields left out of the repr (a dataclass's ``field(repr=False)``)
    _uncompared: tuple[str, ...] = ()  # fields left out of equality and hashing (``field(compare=False)``)

    def _set(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: {type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: {type(self).__name__} is frozen")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def _compared(self) -> tuple[Any, ...]:
        if not self._uncompared:
            return self._values()
        return tuple(getattr(self, name) for name in self._fields if name not in self._uncompared)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._compared() == other._compared()  # type: ignore[attr-defined]
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._compared())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields if n not in self._hidden)
        return f"{type(self).__name__}({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._values())
