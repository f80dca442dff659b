"""A provider that runs a local command: the prompt goes to its stdin, the reply comes from its stdout.

The command comes from the user's own config (never from a project) and runs without a shell, in
its own process group (session) so that a timeout or a cancel kills it and everything it started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from core.providers.base import (
    CancelCheck,
    ProgressCallback,
    ProviderError,
    ProviderRequest,
    never_cancelled,
    no_progress,
)

__all__ = ["CommandProvider"]

_POLL_S = 0.1
_STDERR_TAIL = 300


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the process and its whole group, then reap it; never raises."""
    if proc.poll() is None or sys.platform != "win32":
        try:
            if sys.platform == "win32":
                proc.kill()
            else:
                os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
    try:
        proc.wait(timeout=5)
    except Exception:  # the process is gone or unkillable; nothing more to do
        pass


def _tail(data: bytes | None) -> str:
    text = (data or b"").decode("utf-8", "replace").strip()
    if len(text) > _STDERR_TAIL:
        text = "…" + text[-_STDERR_TAIL:]
    return " ".join(text.split())


class CommandProvider:
    """Runs ``argv`` with the prompt on stdin and a timeout; returns stdout as the reply."""

    def __init__(self, name: str, argv: list[str], timeout_s: float = 120.0, cwd: Path | str | None = None) -> None:
        if not argv or not argv[0].strip():
            raise ProviderError(f"{name}: no command configured", "config", name)
        self.name = name
        self.argv = list(argv)
        self.timeout_s = timeout_s
        self.cwd = cwd

    def _error(self, message: str, kind: str) -> ProviderError:
        return ProviderError(f"{self.name}: {message}", kind, self.name)  # type: ignore[arg-type]

    def _start(self, cwd: Path | str | None) -> subprocess.Popen[bytes]:
        extra: dict[str, object] = {}
        if sys.platform == "win32":
            extra["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
        else:
            extra["start_new_session"] = True
        try:
            return subprocess.Popen(  # noqa: S603 (argv from the user's own config, no shell)
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=cwd, **extra,  # type: ignore[call-overload]
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
        cwd = self.cwd if self.cwd is not None else request.project_root
        proc = self._start(cwd)
        started = time.monotonic()
        program = Path(self.argv[0]).name
        progress(0, f"Running {program}")
        outcome: dict[str, Any] = {}

        def talk() -> None:
            # communicate() cannot resume writing stdin after a timeout, so it runs whole on its own
            # thread; killing the process group ends it.
            try:
                outcome["out"], outcome["err"] = proc.communicate(request.prompt.encode("utf-8"))
            except BaseException as exc:  # handed to the calling thread
                outcome["error"] = exc

        thread = threading.Thread(target=talk, name=f"memdesk-{self.name}", daemon=True)
        thread.start()
        try:
            while thread.is_alive():
                thread.join(_POLL_S)
                if not thread.is_alive():
                    break
                elapsed = time.monotonic() - started
                if cancel():
                    raise self._error("cancelled", "cancelled")
                if elapsed >= self.timeout_s:
                    raise self._error(f"no reply from {self.argv[0]!r} within {self.timeout_s:g} s (timeout); "
                                      "the command was stopped", "timeout")
                progress(min(95, int(100 * elapsed / self.timeout_s)), f"Waiting for {program} ({int(elapsed)} s)")
        except BaseException:
            _kill_group(proc)
            thread.join(5)
            raise
        if "error" in outcome:
            raise self._error(f"talking to {self.argv[0]!r} failed: {outcome['error']}", "server")
        if proc.returncode != 0:
            detail = _tail(outcome.get("err"))
            raise self._error(f"command {self.argv[0]!r} exited with status {proc.returncode}"
                              + (f": {detail}" if detail else ""), "server")
        try:
            reply = outcome["out"].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._error(f"the command's output is not valid UTF-8 (byte offset {exc.start})",
                              "bad_reply") from exc
        progress(100, "Reply received")
        return reply
