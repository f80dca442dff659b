"""The firewall as the write pipeline's screen stage (``Project.screen``, :mod:`core.storage.pipeline`).

For each write: run the rules on what it adds (:class:`~core.firewall.engine.Engine`), ask the
project's policy what each finding means for this writer, and answer with the strictest action:
``write`` (flags reported as warnings), ``hold`` (into the inbox, id returned), or ``refuse``. A rule
family that fails or runs out of time counts as the rule ``error``: held for agents (fail closed),
warned for the operator (fail open).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from core.firewall.engine import Engine, Screening
from core.firewall.policy import SEVERITY, load_policy
from core.firewall.rules import Finding
from core.storage.pipeline import Flag, ScreenVerdict, WriteRequest

if TYPE_CHECKING:
    from core.firewall.inbox import Inbox


def _flag(finding: Finding) -> Flag:
    return Flag(finding.rule, finding.kind, finding.line, finding.span, finding.message)


class FirewallScreen:
    """The screen one project installs: callable with a :class:`~core.storage.pipeline.WriteRequest`."""

    def __init__(self, root: Path | str, *, config_dir: Callable[[], Path] | None = None,
                 engine: Engine | None = None) -> None:
        self.root = Path(root)
        self.engine = engine or Engine()
        self._config_dir = config_dir

    def inbox(self) -> Inbox:
        """The project's inbox, sealed with the current user's key."""
        from core.firewall.inbox import Inbox  # here: only a held write needs it

        if self._config_dir is not None:
            return Inbox(self.root, self._config_dir())
        from core.storage.userdirs import user_config_dir

        return Inbox(self.root, user_config_dir())

    def scan(self, request: WriteRequest) -> Screening:
        """The rules' findings on ``request`` (no policy applied)."""
        return self.engine.scan(request.text, current=request.current, op=request.op, key=request.path)

    def judge(self, request: WriteRequest) -> tuple[Screening, list[tuple[Finding, str]], str, tuple[Flag, ...],
                                                    str | None]:
        """The rules and the policy on ``request``, nothing acted on: the screening, each finding with its
        action, the strictest action, the flags shown and the rules' errors (``None``: none)."""
        policy = load_policy(self.root)
        screening = self.scan(request)
        writer = request.writer
        decided: list[tuple[Finding, str]] = [
            (f, policy.action(writer.kind, writer.name, f.rule, f.kind)) for f in screening.findings]
        reasons = [reason for _, reason in screening.errors]
        error_action = policy.action(writer.kind, writer.name, "error", "error") if reasons else "allow"
        action = max([a for _, a in decided] + [error_action], key=SEVERITY.__getitem__, default="allow")
        shown = tuple(_flag(f) for f, a in decided if a != "allow")
        return screening, decided, action, shown, "; ".join(reasons) or None

    def __call__(self, request: WriteRequest) -> ScreenVerdict:
        screening, decided, action, shown, reason = self.judge(request)
        writer = request.writer
        if action in ("allow", "warn"):
            return ScreenVerdict("write", shown, reason=reason)
        stopping = [f for f, a in decided if a == action]
        why = reason or "; ".join(f"{f.rule} at line {f.line}: {f.message}" for f in stopping[:3])
        if action == "refuse":
            return ScreenVerdict("refuse", shown, reason=f"refused by the memory firewall ({why})")
        from core.storage.fileio import content_hash

        inbox_id = self.inbox().hold(
            path=request.path, op=request.op, text=request.text, source=request.source,
            writer={"kind": writer.kind, "name": writer.name}, findings=screening.findings, reason=why,
            base_hash=content_hash(request.current) if request.current is not None else None,
            base=request.current)
        return ScreenVerdict("hold", shown, inbox_id=inbox_id,
                             reason=f"held for review in the inbox as {inbox_id} ({why})")
