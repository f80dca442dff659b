"""Ending everything a command started: its process group, its descendants, whatever holds its pipes.

A command runs in its own session (``start_new_session=True``), so ``killpg`` ends the command and
whatever stayed in its group. A descendant that calls ``setsid`` leaves that group; so while the
command runs, its descendants are tracked (through ``/proc`` on Linux, by parent pid, remembered with
their start time so a reused pid is never killed), and on the way out any process still holding the
write end of the command's stdout or stderr pipe is ended too. Elsewhere only the group is ended.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

__all__ = ["ProcessSession"]

_PROC = Path("/proc")


def _start_time(pid: int) -> int | None:
    """The process's start time in clock ticks (field 22 of ``/proc/PID/stat``), ``None`` when gone."""
    try:
        fields = (_PROC / str(pid) / "stat").read_text().rsplit(") ", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[19]) if len(fields) > 19 and fields[0] != "Z" else None


def _children(pid: int) -> list[int]:
    """The direct children of ``pid`` (every thread's ``children`` file)."""
    out: list[int] = []
    try:
        tasks = list((_PROC / str(pid) / "task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            out.extend(int(p) for p in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return out


def _pipe_inode(fd: int) -> int | None:
    try:
        return os.fstat(fd).st_ino
    except OSError:
        return None


def _write_end_holders(inodes: set[int]) -> set[int]:
    """Processes other than this one holding a pipe in ``inodes`` open for writing."""
    holders: set[int] = set()
    wanted = {f"pipe:[{ino}]" for ino in inodes}
    me = os.getpid()
    try:
        pids = [int(p.name) for p in _PROC.iterdir() if p.name.isdigit()]
    except OSError:
        return holders
    for pid in pids:
        if pid == me:
            continue
        fd_dir = _PROC / str(pid) / "fd"
        try:
            fds = list(fd_dir.iterdir())
        except OSError:
            continue  # another user's process, or gone
        for fd in fds:
            try:
                if os.readlink(fd) not in wanted:
                    continue
                flags = next(line for line in (_PROC / str(pid) / "fdinfo" / fd.name).read_text().splitlines()
                             if line.startswith("flags:"))
            except (OSError, StopIteration):
                continue
            if int(flags.split()[1], 8) & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR):
                holders.add(pid)
                break
    return holders


class ProcessSession:
    """The processes of one command run: :meth:`track` while it runs, :meth:`end` to stop them all."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.linux = sys.platform.startswith("linux") and _PROC.is_dir()
        self.seen: dict[int, int] = {}  # pid -> start time
        self._pipes = {ino for stream in (proc.stdout, proc.stderr) if stream is not None
                       if (ino := _pipe_inode(stream.fileno())) is not None}
        self.track()

    def track(self) -> None:
        """Remember every live descendant of the command (cheap; call it while the command runs)."""
        if not self.linux:
            return
        todo = [self.proc.pid]
        while todo:
            pid = todo.pop()
            for child in _children(pid):
                if child not in self.seen and (started := _start_time(child)) is not None:
                    self.seen[child] = started
                    todo.append(child)

    def end(self) -> None:
        """Kill the command's group, every tracked descendant still alive and every holder of its pipes."""
        if sys.platform == "win32":
            with contextlib.suppress(OSError):
                self.proc.kill()
            return
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if not self.linux:
            return
        self.track()
        for pid, started in list(self.seen.items()):
            if _start_time(pid) == started:  # the same process, not a reused pid
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        for pid in _write_end_holders(self._pipes):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def close(self) -> None:
        """Reap the command; never raises. (Its output pipes are closed by the threads reading them.)"""
        try:
            self.proc.wait(timeout=5)
        except Exception:  # unkillable or already reaped: nothing more to do
            pass
