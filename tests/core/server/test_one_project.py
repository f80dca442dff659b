"""One project model per folder per process (issue 19, item 4): the server, the seed-named functions and the
app share it, and a changed config reloads that one instead of a second model (and a second backend)."""

from __future__ import annotations

import json
from pathlib import Path

from core.project import open_project
from core.project_memory import read_project_memory
from core.settings import update_settings


def test_the_server_and_the_seed_functions_share_one_model_through_a_config_change(serve, token,
                                                                                   sample_project: Path):
    running = serve(sample_project)
    c = running.client(token)
    assert c.get("/api/memory").status_code == 200
    model = running.served.get()
    assert open_project(sample_project) is model
    read_project_memory(sample_project)
    assert open_project(sample_project) is model
    backend_before = model.backend
    update_settings(sample_project, {"memoryBackend": "readonly"})
    r = c.put("/api/memory", json={"content": "# Project Memory\n\nnew\n"})
    assert r.status_code == 409 and r.json()["code"] == "READ_ONLY"  # the reloaded model's backend answers
    assert running.served.get() is model and open_project(sample_project) is model
    assert model.backend is not backend_before and model.backend.id == "readonly"
    assert json.loads(c.get("/api/memory/backend").text)["currentBackend"] == "readonly"
