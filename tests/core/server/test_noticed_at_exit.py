"""A server run inside another program (the app's local server: gui/local_server.py) that exits right after a read
saw another program's append still records that append: the noticer's run waits a second to be joined, and the
interpreter's exit hooks must record it before history's thread stops taking work, whichever of the two started
first in the process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from core.storage.history import versions as history
from tests.core.server.conftest import REPO, cli_env

CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path

    import httpx

    from core.server.http import create_app
    from core.server.runner import bind_socket, make_server
    from core.server.service import ServedProjects
    from core.server.tokens import TokenStore

    root, token = Path(sys.argv[1]), sys.argv[2]
    served = ServedProjects([root])
    sock = bind_socket("127.0.0.1", 0)
    bound = make_server(create_app(served, TokenStore(), port=sock.getsockname()[1], mcp=False), sock)
    thread = bound.start_thread()
    with httpx.Client(base_url=f"http://127.0.0.1:{bound.port}", headers={"Authorization": f"Bearer {token}"}) as c:
        assert c.get("/api/memory").status_code == 200 and c.get("/api/memory").status_code == 200
        with (root / ".fusion" / "memory.md").open("a", encoding="utf-8") as fh:
            fh.write("- appended by another program just before the exit\\n")
        assert c.get("/api/memory").json()["content"].endswith("just before the exit\\n")
    bound.stop()
    thread.join(30)
    print("done")
""")


def test_an_append_noticed_just_before_the_process_exits_is_recorded(real_project: Path, user_config_dir: Path,
                                                                     tokens):
    token = tokens.create("reader", scope="read")
    done = subprocess.run([sys.executable, "-c", CHILD, str(real_project), token], cwd=REPO,
                          env=cli_env(user_config_dir), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr
    assert "was not recorded" not in done.stderr, done.stderr
    kept = [e.text for e in history.list_events(real_project, ".fusion/memory.md") if e.author == "program"]
    assert kept == ["- appended by another program just before the exit\n"], (kept, done.stderr)
