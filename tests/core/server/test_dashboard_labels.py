"""Issue 23 item 5: memdesk's layers Fusion does not have showed as "Dreams" in Fusion's Memory view.

Fusion's view (Runfusion/Fusion ``packages/dashboard/app/components/MemoryView.tsx`` at
745971a8b78816c931f203e91afe2781b0a1b574) shows each file of ``GET /api/memory/files`` as ``label — path`` in its
picker, and under it a chip and a description chosen by ``layer``: "Long-term" for ``long-term``, "Daily" for
``daily``, and "Dreams" ("Synthesized patterns and open loops promoted from daily memory.") for anything else
(``MemoryFileInfo.layer`` is ``"long-term" | "daily" | "dreams"`` in ``app/api/memory.ts`` at c81144c7). memdesk
answered its own ``working``, ``insights``, ``archive`` and ``legacy``, so the seed-era ``memory.md`` and the
insights were shown as Dreams. They are durable project memory: ``layer`` is now ``long-term`` for them, and
memdesk's own layer is in ``kind`` (its label stays its own).
"""

from __future__ import annotations

from tests.core.server.test_fusion_dashboard import _api, memdesk_serve  # noqa: F401  (the real server fixture)


def test_every_file_has_a_layer_the_view_labels_right(memdesk_serve, layered_project, sample_project):  # noqa: F811
    (layered_project / ".fusion/memory.md").write_text("# Old memory\n\n- kept from the seed era\n", encoding="utf-8")
    (layered_project / ".fusion/memory-archive.md").write_text("# Archive\n\n- an old entry\n", encoding="utf-8")
    base, token = memdesk_serve
    with _api(base, token) as api:
        layered = {f["path"]: f for f in api.get("/memory/files?projectId=layered").json()["files"]}
        seed = {f["path"]: f for f in api.get("/memory/files?projectId=sample").json()["files"]}
    assert all(f["layer"] in ("long-term", "daily", "dreams") for f in [*layered.values(), *seed.values()])
    shown = {path: (f["layer"], f["kind"], f["label"]) for path, f in layered.items()}
    assert shown[".fusion/memory/MEMORY.md"] == ("long-term", "long-term", "Long-term memory")
    assert shown[".fusion/memory/2026-08-20.md"] == ("daily", "daily", "Daily notes 2026-08-20")
    assert shown[".fusion/memory/DREAMS.md"] == ("dreams", "dreams", "Dreams")
    assert shown[".fusion/agent-memory/reviewer/MEMORY.md"] == ("long-term", "long-term", "reviewer: Long-term memory")
    assert shown[".fusion/memory/memory-insights.md"] == ("long-term", "insights", "Insights")
    assert shown[".fusion/memory-archive.md"] == ("long-term", "archive", "Archive")
    assert shown[".fusion/memory.md"] == ("long-term", "legacy", "Legacy memory.md (not read by Fusion)")
    assert layered[".fusion/memory.md"]["legacy"] is True
    assert {path: (f["layer"], f["kind"]) for path, f in seed.items()} == {
        ".fusion/memory.md": ("long-term", "working"), ".fusion/memory-insights.md": ("long-term", "insights")}
