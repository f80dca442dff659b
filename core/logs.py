"""A module's logger that imports :mod:`logging` when it first logs, not when the module is imported.

Measured reason (issue 19 item 7): ``import logging`` brings ``traceback``, ``linecache``, ``tokenize``,
``textwrap``, ``string`` and ``weakref``, ~3-5 ms of a ``memdesk append`` process whose own work is a few
milliseconds; an append that goes well logs nothing. :func:`get_logger` gives a stand-in with the
``debug``/``info``/``warning``/``error``/``exception`` calls that resolves to ``logging.getLogger(name)`` (the
same object, so handlers, levels and pytest's ``caplog`` see every record, each naming its real caller) on its
first call.

:func:`configure` is ``logging.basicConfig`` for a process that may never log: applied now when
:mod:`logging` is already imported, else when the first stand-in resolves (or :func:`configure_now`).
"""

from __future__ import annotations

import sys
from typing import Any

_pending: dict[str, Any] | None = None


def configure(**basic: Any) -> None:
    """``logging.basicConfig(**basic)`` now if :mod:`logging` is loaded, else before the first record is logged."""
    global _pending
    if "logging" in sys.modules:
        sys.modules["logging"].basicConfig(**basic)
        _pending = None
    else:
        _pending = basic


def configure_now() -> None:
    """Import :mod:`logging` and apply what :func:`configure` left pending (before code that logs on its own)."""
    global _pending
    import logging

    if _pending is not None:
        basic, _pending = _pending, None
        logging.basicConfig(**basic)


class Logger:
    """``logging.getLogger(name)``, looked up (and :mod:`logging` imported) on the first call."""

    __slots__ = ("name", "_real")

    def __init__(self, name: str) -> None:
        self.name = name
        self._real: Any = None

    def _logger(self) -> Any:
        if self._real is None:
            configure_now()
            import logging

            self._real = logging.getLogger(self.name)
        return self._real

    def debug(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._logger().debug(msg, *args, stacklevel=kwargs.pop("stacklevel", 1) + 1, **kwargs)

    def info(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._logger().info(msg, *args, stacklevel=kwargs.pop("stacklevel", 1) + 1, **kwargs)

    def warning(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._logger().warning(msg, *args, stacklevel=kwargs.pop("stacklevel", 1) + 1, **kwargs)

    def error(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._logger().error(msg, *args, stacklevel=kwargs.pop("stacklevel", 1) + 1, **kwargs)

    def exception(self, msg: object, *args: object, **kwargs: Any) -> None:
        kwargs.setdefault("exc_info", True)
        self._logger().error(msg, *args, stacklevel=kwargs.pop("stacklevel", 1) + 1, **kwargs)

    def isEnabledFor(self, level: int) -> bool:  # noqa: N802 (logging's name)
        return bool(self._logger().isEnabledFor(level))


def get_logger(name: str) -> Logger:
    """The logger of module ``name`` (``get_logger(__name__)``), without importing :mod:`logging` yet."""
    return Logger(name)
