"""Consolidation over a simulated year: ``python -m bench consolidation [--days=N]``.

365 daily notes made from real agent-written lines (``tests/data/fusion-real``): each day four lines
taken in turn from the real memory, one line an agent already wrote on an earlier day (so some facts
recur), and one transient session note. Dreams run nightly, compaction of MEMORY.md and DREAMS.md
weekly, every proposal applied unattended where the policy allows (nothing lost, change under 64 KiB).

Four runs, each beside the others: the offline provider checked (memdesk's policy) and unchecked (every
proposal applied, as Fusion's unattended pipeline would), and a lossy model (it keeps the first half of
what it is given, as "be aggressive in trimming" invites) checked and unchecked. Figures: facts
surviving (of the facts of every daily note the ledger does not mark dropped; target 100 %), memory
size over time, runs waiting for review and why. Then the time to build a compaction proposal and its
conservation check for a 1 MiB document (target under 1 s), beside its floor: reading the document's
facts once.
"""

from __future__ import annotations

import random
import re
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from core.consolidation import apply_proposal, run_compact, run_dream
from core.consolidation.facts import fact_set
from core.consolidation.model import ACCOUNTED_FATES
from core.consolidation.offline import compact
from core.consolidation.policy import Policy, wait_reason
from core.consolidation.stage import build_proposal
from core.documents.layout import LONG_TERM_SCAFFOLD, daily_scaffold
from core.project import Project
from core.providers import OfflineProvider, ProviderRequest

REPO = Path(__file__).resolve().parent.parent
REAL = REPO / "tests" / "data" / "fusion-real" / ".fusion" / "memory.md"
MEM = ".fusion/memory"
START = date(2026, 1, 1)
POLICY = Policy(unattended=True, max_change_bytes=64 * 1024)
TRANSIENT = ("Re-ran the flaky suite for this session and it passed", "Waiting on review for the branch, probably nothing",
             "Currently mid-way through the refactor, not finished")


class LossyModel:
    """A model that trims hard: keeps the first half of the daily lines (dreams) or of each section (compaction)."""

    name = "lossy-model"

    def complete(self, request: ProviderRequest, **_: object) -> str:
        """Fusion's reply formats, made by dropping half."""
        if request.system_prompt:  # compaction: the compacted markdown
            out, kept = [], 0
            for line in request.prompt.split("\n"):
                if line.startswith("#") or not line.startswith("- "):
                    out.append(line)
                    kept = 0
                    continue
                kept += 1
                if kept % 2:
                    out.append(line)
            return "\n".join(out)
        lines = [x for x in request.working_memory.split("\n") if x.startswith("- ")]
        return "## DREAMS\n\n" + "\n".join(lines[: max(1, len(lines) // 2)]) + "\n\n## LONG_TERM_UPDATES\n"


def pool() -> list[str]:
    """Real single-line bullets of agent-written memory."""
    return [line for line in REAL.read_text(encoding="utf-8").split("\n")
            if line.startswith("- ") and 40 < len(line) < 400 and "`" in line or re.match(r"^- .*FN-\d+", line)]


def notes(days: int) -> list[tuple[str, str]]:
    """``(day, text)`` daily notes in Fusion's format."""
    rng = random.Random(21)
    lines = pool()
    out, written = [], []
    for k in range(days):
        day = (START + timedelta(days=k)).isoformat()
        todays = [lines[(4 * k + i) % len(lines)] for i in range(4)]
        if written:
            todays.append(rng.choice(written))
        todays.append(f"- {rng.choice(TRANSIENT)}")
        written.extend(todays[:4])
        out.append((day, daily_scaffold(day) + "".join(f"\n{t}\n" for t in todays)))
    return out


def simulate(provider: object, checked: bool, days: list[tuple[str, str]]) -> dict[str, object]:
    """One simulated year in a fresh project; what survived, sizes, and what waited."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / MEM).mkdir(parents=True)
        project = Project(root)
        project.write(f"{MEM}/MEMORY.md", LONG_TERM_SCAFFOLD, source="create")
        facts_in: set[str] = set()
        dropped: set[str] = set()
        waiting: Counter[str] = Counter()
        sizes: list[tuple[str, int]] = []
        runs = 0
        for k, (day, text) in enumerate(days):
            project.write(f"{MEM}/{day}.md", text, source="append")
            facts_in |= fact_set(text)
            moment = datetime.fromisoformat(day).replace(tzinfo=UTC) + timedelta(days=1, hours=4)
            outcomes = [run_dream(project, provider, now=moment, origin="scheduled")]  # type: ignore[arg-type]
            if k % 7 == 6:
                for rel in (f"{MEM}/MEMORY.md", f"{MEM}/DREAMS.md"):
                    outcomes.append(run_compact(project, rel, provider, now=moment, origin="scheduled"))  # type: ignore[arg-type]
            for outcome in outcomes:
                if outcome.proposal is None:
                    continue
                runs += 1
                proposal = outcome.proposal
                reason = wait_reason(POLICY, proposal) if checked else None
                if reason is not None:
                    waiting[re.sub(r"^\d+ facts?", "N facts", re.sub(r"is [\d.]+ \w+", "is X", reason))] += 1
                    continue
                applied = apply_proposal(project, proposal.id, allow_loss=not checked)
                if applied.applied:
                    for entry in proposal.ledger:
                        if entry.fate in ACCOUNTED_FATES:
                            dropped |= fact_set(entry.text)
            if k % 30 == 29 or k == len(days) - 1:
                size = sum(len(project.read(f"{MEM}/{n}").encode()) for n in ("MEMORY.md", "DREAMS.md"))
                sizes.append((day, size))
        memory = "\n".join(project.read(d.path) for d in project.documents() if d.layer in ("long-term", "dreams", "daily"))
        counted = facts_in - dropped
        present = fact_set(memory)
        surviving = sum(1 for f in counted if f in present or f in memory)
        return {"surviving": surviving, "counted": len(counted), "dropped": len(facts_in & dropped), "sizes": sizes,
                "waiting": waiting, "runs": runs}


def one_mib() -> str:
    """The real memory repeated to 1 MiB, each copy's bullets made distinct, a few exact duplicates left."""
    real = REAL.read_text(encoding="utf-8")
    parts, k = [], 0
    while sum(len(p) for p in parts) < 1_000_000:
        parts.append(real.replace("\n- ", f"\n- (copy {k}) ") if k else real)
        k += 1
    return "".join(parts)[:1_040_000].rsplit("\n", 1)[0] + "\n"


def timing() -> None:
    """Compaction proposal + conservation check for a 1 MiB document, beside reading its facts once."""
    text = one_mib()
    floor, full = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        fact_set(text)
        floor.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        result = compact(text, f"{MEM}/MEMORY.md")
        proposal = build_proposal("compact", "offline", "bench", {f"{MEM}/MEMORY.md": text},
                                  {f"{MEM}/MEMORY.md": result.text}, list(result.ledger), "bench", "manual",
                                  datetime.now(UTC))
        full.append(time.perf_counter() - t0)
    print(f"1 MiB compaction proposal + conservation check: {min(full):.2f} s (target < 1 s; floor, extracting the "
          f"document's facts once: {min(floor):.2f} s); {len(proposal.changes)} changes, {len(proposal.ledger)} ledger "
          f"entries, {len(proposal.lost_facts)} facts lost, {len(text.encode()):,} bytes")


def main(argv: list[str] | None = None) -> None:
    """Run the year (``--days=N`` for a shorter one) and the 1 MiB timing."""
    args = sys.argv[1:] if argv is None else argv
    days = next((int(a.split("=", 1)[1]) for a in args if a.startswith("--days=")), 365)
    year = notes(days)
    from bench.noticed_watch_timing import run as watch_timing

    watch_timing(year)  # other programs' runs kept (--watch: only this)
    if "--watch" in args:
        return
    print(f"{days} daily notes from {len(pool())} real lines; dreams nightly, compaction weekly")
    for label, provider, checked in (("offline, checked (memdesk)", OfflineProvider(), True),
                                     ("offline, unchecked", OfflineProvider(), False),
                                     ("lossy model, checked (memdesk)", LossyModel(), True),
                                     ("lossy model, unchecked (Fusion's unattended run)", LossyModel(), False)):
        t0 = time.perf_counter()
        r = simulate(provider, checked, year)
        pct = 100 * r["surviving"] / max(1, r["counted"])  # type: ignore[operator]
        print(f"\n[{label}] {time.perf_counter() - t0:.0f} s, {r['runs']} proposals")
        print(f"  facts surviving: {r['surviving']:,} of {r['counted']:,} = {pct:.1f} % (target 100 %); "
              f"{r['dropped']} facts marked dropped in the ledger")
        print("  memory size (MEMORY.md + DREAMS.md): " + ", ".join(f"{d[5:]} {s / 1024:.0f} KiB" for d, s in r["sizes"]))  # type: ignore[union-attr]
        waits = r["waiting"]
        print(f"  waited for review: {sum(waits.values())}" + "".join(f"; {n} × {why}" for why, n in waits.items()))  # type: ignore[union-attr]
    timing()


if __name__ == "__main__":
    main()
