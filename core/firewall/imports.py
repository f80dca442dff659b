"""The firewall's screen on text memdesk takes in without writing it (issue 19, item 1).

An agent's ``>>`` to a mirrored file (``sqlite``, ``postgres``) and another host's change in a shared
database are already written when memdesk sees them: the file or the database holds them. The import
therefore always proceeds, exactly once (:mod:`core.backends.mirror_ledger`); this module only screens
the text taken in (never the whole document: the backends hand over the imported lines alone, and only
when there are some) with the rules and policy of the write pipeline's screen
(:meth:`core.firewall.screen.FirewallScreen.judge`, as a write of the writer ``program:mirror`` or
``program:other-host``), and reports what it flags:

* a one-line warning in the log naming the document, the rules and the action the policy would take
  on a write (``hold`` or ``refuse`` are reported, not applied: nothing is held or removed);
* an event in the project's history (source :data:`SOURCE`, author the writer), which ``memdesk
  activity`` and the Activity view list: its first line is that warning, the next the flags as JSON
  (``rule``, ``kind``, ``line`` and ``span``: 1-based line and character offsets in the document). The secret
  itself is never in either.

Installed for every backend of the process by :mod:`core.project.model`
(:func:`core.backends.base.install_import_screen`).
"""

from __future__ import annotations

import json
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.logs import get_logger
from core.storage.pipeline import WriteRequest
from core.storage.writers import Writer

log = get_logger(__name__)

#: The source of the history event a flagged import leaves.
SOURCE = "firewall-import"
_FROM = {"mirror": "an agent's addition to its mirror file", "other-host": "another host's change"}
_screens: dict[Path, Any] = {}


def _screen(root: Path) -> Any:
    from core.firewall.screen import FirewallScreen

    screen = _screens.get(root)
    if screen is None:
        screen = _screens[root] = FirewallScreen(root)
    return screen


def screen_import(root: Path, path: str, text: str, before: str | None, origin: str) -> list[dict[str, Any]]:
    """Screen ``text`` taken into ``path`` (after ``before``) from ``origin``; report and return the flags."""
    writer = Writer("program", origin)
    request = WriteRequest(path, "append", text, writer, "mirror-import", before)
    _screening, _decided, action, flags, error = _screen(Path(root)).judge(request)
    if not flags and error is None:
        return []
    offset = before.count("\n") if before else 0  # the imported text's first line is the document's next (or last)
    at = len(before or "")  # the imported text's first character in the document
    shown = [{"rule": f.rule, "kind": f.kind, "line": f.line + offset, "span": [f.span[0] + at, f.span[1] + at]}
             for f in flags]
    rules = ", ".join(sorted({f"{f['rule']} ({f['kind']}) at line {f['line']}" for f in shown})) or \
        f"the rules failed: {error}"
    what = "reported, not applied: " if action in ("hold", "refuse") else ""
    # The rule first: a view that elides a long line keeps its start.
    line = (f"{rules} in {path}: flagged by the memory firewall in {_FROM.get(origin, origin)}, imported; "
            f"{what}the text is kept, already in the {'file' if origin == 'mirror' else 'shared database'} "
            f"(policy: {action}); review it in {path}")
    log.warning("%s", line)
    from core.storage.history import worker

    worker.submit(_record, root, path, line + "\n" + json.dumps(shown), writer.label)
    return shown


def _record(root: Path, path: str, text: str, author: str) -> None:
    from core.storage.history.worker import using

    data = text.encode("utf-8")
    try:
        with using(root, create=True, write=True) as conn:
            assert conn is not None
            conn.execute("INSERT INTO events(path, created_at, source, author, size, data) VALUES (?,?,?,?,?,?)",
                         (path, datetime.now(UTC).isoformat(timespec="seconds"), SOURCE, author, len(data),
                          zlib.compress(data, 6)))
    except Exception as exc:  # a report: the imported text is safe whatever happens here
        log.warning("the firewall's report on %s was not recorded in history: %s", path, exc)
