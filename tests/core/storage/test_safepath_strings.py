"""``resolve_both_in_root`` works on strings (``os.path.realpath``), not pathlib objects, for speed: it must give
what ``Path.resolve()`` gives, links inside the root followed, links out, loops and a linked root refused or
resolved as before."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.errors import PathOutsideRootError
from core.storage.safepath import resolve_both_in_root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".fusion" / "memory").mkdir(parents=True)
    (root / ".fusion" / "memory.md").write_text("x\n", encoding="utf-8")
    (root / "inside.md").symlink_to(root / ".fusion" / "memory.md")
    (root / "dir-link").symlink_to(root / ".fusion")
    (tmp_path / "outside.md").write_text("o\n", encoding="utf-8")
    (root / "out.md").symlink_to(tmp_path / "outside.md")
    (root / "out-dir").symlink_to(tmp_path)
    (root / "loop").symlink_to(root / "loop")
    (tmp_path / "root-link").symlink_to(root)
    return root


@pytest.mark.parametrize("rel", [".fusion/memory.md", "./.fusion//memory.md", "", ".", "inside.md", "dir-link/memory.md",
                                 "dir-link/memory", "not/yet/there.md", ".fusion/memory/MEMORY.md"])
def test_as_pathlib_resolves_it(tree: Path, rel: str):
    for root in (tree, tree.parent / "root-link", str(tree)):
        logical, real = resolve_both_in_root(root, rel)
        want_root = Path(root).resolve()
        assert logical == want_root / rel and real == (want_root / rel).resolve()
        assert isinstance(logical, Path) and isinstance(real, Path)


@pytest.mark.parametrize(("rel", "named"), [("out.md", "'out.md' is a symbolic link to"),
                                            ("out-dir/outside.md", "'out-dir' is a symbolic link to"),
                                            ("loop", "'loop' is a symbolic link loop"),
                                            ("loop/x.md", "symbolic link loop"),
                                            ("../proj/.fusion/memory.md", "contains '..'"),
                                            (os.sep + "etc/passwd", "is absolute"), ("a\x00b", "NUL")])
def test_what_leaves_the_root_is_refused_by_name(tree: Path, rel: str, named: str):
    with pytest.raises(PathOutsideRootError, match=named.replace("(", r"\(")):
        resolve_both_in_root(tree, rel)


def test_the_filesystem_root_holds_everything():
    assert resolve_both_in_root("/", "etc") == (Path("/etc"), Path("/etc").resolve())
