"""core.logs: a module's logger that imports logging on its first record, configured as core.cli asks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.logs import get_logger

REPO = Path(__file__).resolve().parents[2]


def test_records_reach_the_named_logger_and_name_their_caller(caplog: pytest.LogCaptureFixture) -> None:
    log = get_logger("core.test_logs_module")
    with caplog.at_level("DEBUG", logger="core.test_logs_module"):
        log.debug("a debug %s", "line")
        log.warning("a warning %d", 7)
        try:
            raise ValueError("boom")
        except ValueError:
            log.exception("failed")
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        ("core.test_logs_module", "DEBUG", "a debug line"), ("core.test_logs_module", "WARNING", "a warning 7"),
        ("core.test_logs_module", "ERROR", "failed")]
    assert all(r.filename == "test_logs.py" for r in caplog.records)  # the caller, not core/logs.py
    assert caplog.records[-1].exc_info is not None


def run(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


def test_configuration_waits_for_the_first_record_and_is_then_applied() -> None:
    done = run("import sys; from core.logs import configure, get_logger\n"
               "configure(level=40, format='memdesk-log: %(message)s')\n"
               "log = get_logger('core.x'); print('logging' in sys.modules)\n"
               "log.warning('not shown: under ERROR'); log.error('shown %s', 1)\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "False\n" and done.stderr == "memdesk-log: shown 1\n"


def test_a_cli_command_that_is_not_append_configures_logging_at_once() -> None:
    done = run("import logging, sys; from core.cli import main; rc = main(['files', '-p', '/nonexistent-folder'])\n"
               "print(rc, logging.getLogger().level == logging.ERROR)")
    assert done.stdout.split() == ["2", "True"], done.stderr

