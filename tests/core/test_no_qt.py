"""``core`` must import with PySide6 blocked (style rule 1)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import importlib, pkgutil, sys

    class Block:
        def find_spec(self, name, path=None, target=None):
            if name == "PySide6" or name.startswith("PySide6.") or name == "gui" or name.startswith("gui."):
                raise ImportError(f"core must not import {name}")
            return None

    sys.meta_path.insert(0, Block())
    import core
    names = ["core"] + [m.name for m in pkgutil.walk_packages(core.__path__, "core.")]
    for name in names:
        if name.endswith("__main__"):
            continue
        importlib.import_module(name)
    assert not any(m.startswith("PySide6") for m in sys.modules), "PySide6 got imported"
    print(len(names))
    """
)


def test_every_core_module_imports_without_qt():
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) >= 10
