"""Shared test setup: Qt runs offscreen; projects are built in tmp folders from real data."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false")
# A running Fusion on the test machine (its ~/.fusion/settings.json) must not become the tests' settings store.
# Nor a folder in the repository: memdesk writes Fusion's global settings there when Fusion is not running.
os.environ.setdefault("MEMDESK_FUSION_HOME", os.path.join(tempfile.mkdtemp(prefix="memdesk-test-home-"), ".fusion"))
# Nor the user's own memdesk folder (firewall.key, reads.db, config.json): each run gets its own, so runs by
# several people on one machine, and the user's real config, never share state with the tests.
os.environ.setdefault("MEMDESK_CONFIG_DIR", tempfile.mkdtemp(prefix="memdesk-test-config-"))

import pytest  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "resources" / "sample"
REAL_MEMORY = REPO / "tests" / "data" / "fusion-real" / ".fusion" / "memory.md"
LAYERED = REPO / "tests" / "data" / "fusion-layered"

# The chat-completions server and the user-config and sample-project fixtures (chat_server, user_config_dir,
# tidepool), and the throwaway PostgreSQL cluster (pg_server, pg, pg_connection), for every test that asks.
pytest_plugins = ("tests.core.chat_server", "tests.core.pg_server")


@pytest.fixture(autouse=True)
def _state_writer_of_the_process():
    """Each test starts with memdesk's default state writer: the CLI's ``main`` and the app's session name
    this process's writer (:func:`core.storage.statefiles.set_process_writer`), and a test that ran them
    in-process would otherwise hand its writer on to the next test's state log."""
    from core.storage import statefiles

    statefiles.set_process_writer("memdesk")
    yield
    statefiles.set_process_writer("memdesk")


@pytest.fixture(autouse=True)
def _fusion_home_of_the_test(monkeypatch, tmp_path_factory):
    """Each test its own Fusion home (absent until written): ``PUT /api/settings/global`` writes Fusion's global
    settings there (core.settings.fusion_home), and one test's theme or token must not reach the next."""
    if os.environ.get("MEMDESK_FUSION_HOME", "").startswith(tempfile.gettempdir()):
        monkeypatch.setenv("MEMDESK_FUSION_HOME", str(tmp_path_factory.mktemp("fusion-home") / ".fusion"))
    yield


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder."""
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def sample_project(tmp_path: Path) -> Path:
    """A copy of the bundled sample project."""
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root)
    return root


@pytest.fixture
def real_project(tmp_path: Path) -> Path:
    """A project holding the real agent-written Fusion memory (102 KB, 1,293 lines)."""
    root = tmp_path / "real"
    (root / ".fusion").mkdir(parents=True)
    shutil.copyfile(REAL_MEMORY, root / ".fusion" / "memory.md")
    return root


@pytest.fixture
def layered_project(tmp_path: Path) -> Path:
    """A copy of a project in current Fusion's layered layout (design 2a), with two agents' memory."""
    root = tmp_path / "layered"
    shutil.copytree(LAYERED, root, symlinks=True)
    return root
