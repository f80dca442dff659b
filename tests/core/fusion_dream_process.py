"""Fusion's dream run as a real separate process: what ``packages/core/src/memory-dreams.ts`` does to disk.

(Runfusion/Fusion at f4de01a1531bbcfd1aedddbd8c2598a19a8ee619, read not copied, see docs/consolidation.md):
appends ``\\n## D\\n\\n<dreams>\\n`` to DREAMS.md and ``\\n## Dream Updates D\\n\\n<updates>\\n`` to MEMORY.md,
each by reading the file and writing it whole, then overwrites the day's note with the processed marker.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MEM = ".fusion/memory"
DAY = "2026-08-19"
TOUCHED = (f"{MEM}/{DAY}.md", f"{MEM}/DREAMS.md", f"{MEM}/MEMORY.md")

_CODE = r"""
import pathlib, sys
mem = pathlib.Path(sys.argv[1], '.fusion', 'memory')
day = sys.argv[2]
for name, block in (('DREAMS.md', f'\n## {day}\n\n- Polling hooks keep the dashboard fresh.\n'),
                    ('MEMORY.md', f'\n## Dream Updates {day}\n\n- Prefer polling hooks over sockets.\n')):
    p = mem / name
    p.write_text(p.read_text(encoding='utf-8') + block, encoding='utf-8')
(mem / f'{day}.md').write_text(f'# Daily Memory {day}\n\n<!-- Processed into dreams on {day}T04:00:00.000Z -->\n',
                               encoding='utf-8')
"""


def run_fusion_dream(root: Path, day: str = DAY) -> dict[str, bytes]:
    """Run the dream in another process; the bytes of the three documents before it."""
    before = {rel: (root / rel).read_bytes() for rel in TOUCHED}
    subprocess.run([sys.executable, "-c", _CODE, str(root), day], check=True, timeout=60,
                   env={**os.environ, "PYTHONPATH": ""})
    return before
