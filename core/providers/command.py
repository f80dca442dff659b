"""A provider that runs a local command: the prompt goes to its stdin, the reply comes from its stdout.

The command comes from the user's own config (never from a project) and runs without a shell, in a
fresh temporary folder (never the project's, so ``python -m tool`` cannot pick up a project's own
``tool.py``), in its own session. Its stdout is capped (``maxReplyBytes``) and the whole run has a
deadline. On a timeout, a cancel or an over-long reply the whole session is ended: the process group,
every descendant seen while it ran (also one that called ``setsid``) and any process still holding
the write end of its output pipes. See :mod:`core.providers.session`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO

from core.providers.base import (
    DEFAULT_DEADLINE_S,
    DEFAULT_MAX_REPLY_BYTES,
    CancelCheck,
    ProgressCallback,
    ProviderError,
    ProviderRequest,
    format_bytes,
    never_cancelled,
    no_progress,
)
from core.providers.session import ProcessSession

__all__ = ["CommandProvider"]

_POLL_S = 0.1
_STDERR_KEEP = 64 * 1024
_STDERR_TAIL = 300
#: After the command exits, how long its output may take to reach end-of-file before whatever still
#: holds the pipe (a descendant that escaped the session) is ended.
_EXIT_GRACE_S = 0.5


def _tail(data: bytes | bytearray | None) -> str:
    text = bytes(data or b"").decode("utf-8", "replace").strip()
    if len(text) > _STDERR_TAIL:
        text = "…" + text[-_STDERR_TAIL:]
    return " ".join(text.split())


def _stdin_text(request: ProviderRequest) -> str:
    """What the command reads: the caller's system prompt (when it has one) before the prompt."""
    return f"{request.system_prompt}\n\n{request.prompt}" if request.system_prompt else request.prompt


class _Output:
    """Reads one pipe on its own thread: up to ``cap`` bytes (or only the last ``keep`` bytes).

    The thread closes the pipe itself when it is done, so a descriptor is never closed under a read
    still in progress (its number could be reused by another file meanwhile).
    """

    def __init__(self, stream: IO[bytes], *, cap: int | None = None, keep: int | None = None) -> None:
        self.data = bytearray()
        self.overflow = threading.Event()
        self._stream, self._cap, self._keep = stream, cap, keep
        self.thread = threading.Thread(target=self._run, daemon=True, name="memdesk-command-output")
        self.thread.start()

    def _run(self) -> None:
        fd = self._stream.fileno()
        try:
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return
                self.data += chunk
                if self._cap is not None and len(self.data) > self._cap:
                    del self.data[self._cap:]  # never hold more than the cap
                    self.overflow.set()
                    return
                if self._keep is not None and len(self.data) > self._keep:
                    del self.data[: len(self.data) - self._keep]
        except OSError:
            return
        finally:
            try:
                self._stream.close()
            except OSError:
                pass


def _feed(stream, data: bytes) -> None:  # noqa: ANN001 (a binary pipe)
    # On its own thread: a command that does not read its stdin must not block the deadline.
    try:
        stream.write(data)
    except OSError:
        pass
    finally:
        try:
            stream.close()
        except OSError:
            pass


class CommandProvider:
    """Runs ``argv`` with the prompt on stdin, within a deadline; returns stdout (capped) as the reply."""

    def __init__(self, name: str, argv: list[str], timeout_s: float = 120.0, *,
                 max_reply_bytes: int | None = None, deadline_s: float | None = None) -> None:
        if not argv or not argv[0].strip():
            raise ProviderError(f"{name}: no command configured", "config", name)
        self.name = name
        self.argv = list(argv)
        self.timeout_s = timeout_s
        self.max_reply_bytes = max_reply_bytes or DEFAULT_MAX_REPLY_BYTES
        # The command's timeout is its overall deadline; a configured deadline can only shorten it.
        self.deadline_s = min(timeout_s, deadline_s or DEFAULT_DEADLINE_S)

    def _error(self, message: str, kind: str) -> ProviderError:
        return ProviderError(f"{self.name}: {message}", kind, self.name)  # type: ignore[arg-type]

    def _start(self, workdir: str) -> subprocess.Popen[bytes]:
        extra: dict[str, object] = {}
        if sys.platform == "win32":
            extra["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
        else:
            extra["start_new_session"] = True
        try:
            return subprocess.Popen(  # noqa: S603 (argv from the user's own config, no shell)
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=workdir, **extra,  # type: ignore[call-overload]
            )
        except FileNotFoundError as exc:
            raise self._error(f"command not found: {self.argv[0]!r}", "config") from exc
        except PermissionError as exc:
            raise self._error(f"command {self.argv[0]!r} is not executable", "config") from exc
        except OSError as exc:
            raise self._error(f"cannot start {self.argv[0]!r}: {exc.strerror or exc}", "config") from exc

    def complete(self, request: ProviderRequest, *, cancel: CancelCheck = never_cancelled,
                 progress: ProgressCallback = no_progress) -> str:
        """Run the command on the prompt and return its stdout; raise :class:`ProviderError` on failure."""
        workdir = tempfile.mkdtemp(prefix="memdesk-command-")
        try:
            proc = self._start(workdir)
            session = ProcessSession(proc)
            try:
                out = self._run(proc, session, request, cancel, progress)
            except BaseException:
                session.end()
                raise
            finally:
                session.close()
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        try:
            reply = bytes(out).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._error(f"the command's output is not valid UTF-8 (byte offset {exc.start})",
                              "bad_reply") from exc
        progress(100, "Reply received")
        return reply

    def _run(self, proc: subprocess.Popen[bytes], session: ProcessSession, request: ProviderRequest,
             cancel: CancelCheck, progress: ProgressCallback) -> bytearray:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        stdout = _Output(proc.stdout, cap=self.max_reply_bytes)
        stderr = _Output(proc.stderr, keep=_STDERR_KEEP)
        threading.Thread(target=_feed, args=(proc.stdin, _stdin_text(request).encode("utf-8")), daemon=True,
                         name="memdesk-command-input").start()
        started = time.monotonic()
        program = Path(self.argv[0]).name
        progress(0, f"Running {program}")
        exited_at: float | None = None
        while True:
            stdout.thread.join(_POLL_S)
            session.track()
            if stdout.overflow.is_set():
                raise self._error(f"the command wrote more than {format_bytes(self.max_reply_bytes)} on stdout "
                                  "(maxReplyBytes); it was stopped. Raise maxReplyBytes in the provider's "
                                  "settings if the reply is really that long", "bad_reply")
            if proc.poll() is not None:
                exited_at = exited_at or time.monotonic()
                if not stdout.thread.is_alive():
                    break
                if time.monotonic() - exited_at >= _EXIT_GRACE_S:
                    # The command is done but something it started still holds the pipe open.
                    session.end()
                    stdout.thread.join(5)
                    break
            elapsed = time.monotonic() - started
            if cancel():
                raise self._error("cancelled", "cancelled")
            if elapsed >= self.deadline_s:
                raise self._error(f"no reply from {self.argv[0]!r} within {self.deadline_s:g} s (timeout); "
                                  "the command and everything it started were stopped", "timeout")
            progress(min(95, int(100 * elapsed / self.deadline_s)), f"Waiting for {program} ({int(elapsed)} s)")
        stderr.thread.join(_EXIT_GRACE_S)
        if stderr.thread.is_alive():  # something the command started still holds its stderr
            session.end()
            stderr.thread.join(5)
        if proc.returncode != 0:
            detail = _tail(stderr.data)
            raise self._error(f"command {self.argv[0]!r} exited with status {proc.returncode}"
                              + (f": {detail}" if detail else ""), "server")
        return stdout.data
