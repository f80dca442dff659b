"""Ending a one-shot command's process without tearing the interpreter down.

Measured reason: after ``memdesk append`` has written, synced and recorded its entry, Python's own
shutdown frees every object of the ~170 modules it loaded, about 7 ms of a process whose target is
3.5x a bare ``python -c pass`` (~26 ms). :func:`finish` does what that shutdown must do for
memdesk (wait for the other threads, history's writes among them; run the ``atexit`` callbacks;
flush what was printed) and then ends the process with ``os._exit``: every non-daemon thread is
joined first, as the ordinary shutdown joins them. Where this Python lacks the hooks it needs (or it
is not called from the main thread), the process ends as usual.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

#: Commands whose process ends through :func:`finish` when run as ``memdesk COMMAND`` or ``python -m core.cli``.
FAST_EXIT_COMMANDS = frozenset({"append"})


def finish(code: int) -> NoReturn:
    """End the process with ``code`` once everything it started is done."""
    import atexit
    import threading

    shutdown = getattr(threading, "_shutdown", None)
    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
    if shutdown is None or run_exitfuncs is None or threading.current_thread() is not threading.main_thread():
        raise SystemExit(code)
    try:
        shutdown()  # joins every non-daemon thread; concurrent.futures' workers (history's) finish their queue
        run_exitfuncs()  # logging.shutdown, weakref.finalize, tempfile clean-ups...
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except BrokenPipeError:  # the reader went away (`| head`): as core.cli.main, quietly
        pass
    except BaseException:  # anything unusual: the ordinary shutdown, which reports it
        raise SystemExit(code) from None
    os._exit(code)
