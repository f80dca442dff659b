"""Backends: registry, resolution with fallback reason, capabilities, errors, adapter never raising."""

from __future__ import annotations

import logging

import pytest

from core.adapter import MemoryFileAdapter
from core.backends import (
    BackendSettings,
    FileMemoryBackend,
    MemoryBackend,
    MemoryBackendRegistry,
    default_registry,
    get_backend_capabilities,
    require_capability,
    resolve_memory_backend,
)
from core.errors import ERROR_CODES, MemoryBackendError


class Boom(FileMemoryBackend):
    id = "boom"
    name = "Boom"

    def on_initialize(self) -> None:
        raise RuntimeError("database is on fire")


class WithPath(FileMemoryBackend):
    id = "withpath"
    name = "With path"

    class Settings(BackendSettings):
        limit: int = 3

    settings_model = Settings


def test_error_codes_are_the_contract():
    assert set(ERROR_CODES) == {"NOT_INITIALIZED", "NOT_FOUND", "CAPABILITY_UNSUPPORTED", "READ_ONLY",
                                "READ_FAILED", "WRITE_FAILED", "CONFLICT", "QUOTA_EXCEEDED",
                                "BACKEND_UNAVAILABLE", "INVALID_CONFIG"}
    err = MemoryBackendError("m", "CONFLICT", "file", ValueError("x"))
    assert (err.message, err.code, err.backend_id) == ("m", "CONFLICT", "file")
    assert isinstance(err.cause, ValueError)


def test_registry_register_has_list_unregister_create(project):
    reg = MemoryBackendRegistry()
    assert reg.register(FileMemoryBackend) == "file"
    assert reg.has("file") and reg.list() == ["file"]
    backend = reg.create("file", {}, project)
    assert isinstance(backend, MemoryBackend) and backend.initialized
    assert reg.unregister("file") is True and reg.unregister("file") is False
    with pytest.raises(MemoryBackendError) as info:
        reg.create("file", {}, project)
    assert info.value.code == "NOT_FOUND"


def test_default_registry_has_builtins():
    reg = default_registry()
    assert {"file", "readonly"} <= set(reg.list())
    info = reg.info("readonly")
    assert info.capabilities == frozenset({"read"}) and info.version


def test_unknown_backend_falls_back_to_file_with_reason(project, caplog):
    with caplog.at_level(logging.WARNING):
        backend = resolve_memory_backend({"memoryBackend": "vector"}, project)
    assert backend.id == "file"
    assert "vector" in backend.fallback_reason and "is registered (registered:" in backend.fallback_reason
    assert "falling back" in caplog.text


def test_failing_initialize_falls_back(project):
    reg = default_registry()
    reg.register(Boom)
    backend = resolve_memory_backend({"memoryBackend": "boom"}, project, reg)
    assert backend.id == "file" and "database is on fire" in backend.fallback_reason


def test_invalid_backend_config_is_invalid_config(project):
    reg = default_registry()
    reg.register(WithPath)
    with pytest.raises(MemoryBackendError) as info:
        reg.create("withpath", {"limit": "many"}, project)
    assert info.value.code == "INVALID_CONFIG" and "limit" in info.value.message
    backend = resolve_memory_backend({"memoryBackend": "withpath", "memoryBackendConfig": {"limit": 5}},
                                     project, reg)
    assert backend.id == "withpath" and backend.settings.limit == 5 and backend.fallback_reason is None


def test_legacy_backend_type_key_resolves(project):
    assert resolve_memory_backend({"memoryBackendType": "readonly"}, project).id == "readonly"


def test_not_initialized(project):
    backend = FileMemoryBackend()
    with pytest.raises(MemoryBackendError) as info:
        backend.read()
    assert info.value.code == "NOT_INITIALIZED"


def test_capabilities(project):
    file_b = resolve_memory_backend({}, project)
    ro = resolve_memory_backend({"memoryBackend": "readonly"}, project)
    assert get_backend_capabilities(file_b) == frozenset({"read", "write"})
    assert get_backend_capabilities(ro) == frozenset({"read"})
    require_capability(file_b, "write")
    with pytest.raises(MemoryBackendError) as info:
        require_capability(file_b, "search")
    assert info.value.code == "CAPABILITY_UNSUPPORTED"
    with pytest.raises(MemoryBackendError) as info:
        file_b.search("x")
    assert info.value.code == "CAPABILITY_UNSUPPORTED"


def test_readonly_refuses_writes(project):
    (project / ".fusion").mkdir()
    (project / ".fusion/memory.md").write_text("keep\n")
    ro = resolve_memory_backend({"memoryBackend": "readonly"}, project)
    assert ro.read() == "keep\n"
    with pytest.raises(MemoryBackendError) as info:
        ro.write("new")
    assert info.value.code == "READ_ONLY"
    assert (project / ".fusion/memory.md").read_text() == "keep\n"


def test_file_backend_matches_project_memory(project):
    backend = resolve_memory_backend({}, project)
    assert backend.read() == ""  # invariant 9: "" never None
    backend.write("# Project Memory\n")
    assert (project / ".fusion/memory.md").read_text() == "# Project Memory\n"


def test_adapter_never_raises_and_reports(project, caplog):
    backend = resolve_memory_backend({"memoryBackend": "readonly"}, project)
    adapter = MemoryFileAdapter(backend)
    with caplog.at_level(logging.WARNING):
        outcome = adapter.write("x")
    assert outcome.success is False and outcome.code == "READ_ONLY"
    assert "READ_ONLY" in outcome.error and "cannot write" in caplog.text
    (project / ".fusion").mkdir(exist_ok=True)
    (project / ".fusion/memory.md").write_bytes(b"\xff")
    assert adapter.read() == ""
    assert adapter.last_read_error.code == "READ_FAILED"
    backend.shutdown()
    assert adapter.read() == "" and adapter.last_read_error.code == "NOT_INITIALIZED"
    assert adapter.write("y").code == "NOT_INITIALIZED"


def test_adapter_write_quota_and_conflict(project):
    adapter = MemoryFileAdapter(resolve_memory_backend({}, project))
    assert adapter.write("base").success
    assert adapter.write("x" * (1_048_577)).code == "QUOTA_EXCEEDED"
    assert adapter.write("mine", expected_hash="0" * 64).code == "CONFLICT"
    assert adapter.read() == "base"


def test_adapter_turns_unexpected_exceptions_into_outcomes(project):
    class Weird(FileMemoryBackend):
        id = "weird"

        def read(self):
            raise ZeroDivisionError("bad math")

        def write(self, content, **kw):
            raise KeyError("nope")

    reg = default_registry()
    reg.register(Weird)
    adapter = MemoryFileAdapter(reg.create("weird", {}, project))
    assert adapter.read() == ""
    outcome = adapter.write("x")
    assert not outcome.success and "nope" in outcome.error


def test_entry_point_plugins_are_loaded(monkeypatch, project):
    from core.backends import registry as registry_mod

    class EP:
        name = "boomplugin"
        value = "tests:Boom"

        def load(self):
            return WithPath

    monkeypatch.setattr(registry_mod, "entry_points", lambda group: [EP()] if group == "memdesk.backends" else [])
    assert "withpath" in default_registry().list()
