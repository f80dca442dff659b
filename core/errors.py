"""Error types shared across core: backend errors with stable codes, and settings errors."""

from __future__ import annotations

from typing import Literal, get_args

MemoryBackendErrorCode = Literal[
    "NOT_INITIALIZED",
    "NOT_FOUND",
    "CAPABILITY_UNSUPPORTED",
    "READ_ONLY",
    "READ_FAILED",
    "WRITE_FAILED",
    "CONFLICT",
    "QUOTA_EXCEEDED",
    "BACKEND_UNAVAILABLE",
    "INVALID_CONFIG",
]

ERROR_CODES: tuple[str, ...] = get_args(MemoryBackendErrorCode)


class MemoryBackendError(Exception):
    """A failed backend operation, with a stable ``code`` the caller can branch on."""

    def __init__(
        self,
        message: str,
        code: str,
        backend_id: str = "",
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.backend_id = backend_id
        self.cause = cause
        if cause is not None:
            self.__cause__ = cause

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"MemoryBackendError({self.message!r}, code={self.code!r}, backend_id={self.backend_id!r})"


class SettingsError(ValueError):
    """An invalid setting or an unreadable ``config.json``; names the field and the reason."""

    def __init__(self, message: str, field: str | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.reason = reason or message


class PathOutsideRootError(ValueError):
    """A path that would leave the project root (absolute, ``..`` or a symlink escape)."""
