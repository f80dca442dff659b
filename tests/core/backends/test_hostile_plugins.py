"""Third-party backends that follow the seed's contract, or misbehave (issue 9 item 17)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.adapter import MemoryFileAdapter
from core.backends import MemoryBackend, MemoryBackendRegistry, default_registry, resolve_memory_backend
from core.storage import fileio


class _Store:
    """Where the test backends keep their text (a class attribute per test through ``seen``)."""

    text = "# Project Memory\n"


class SeedWrite(MemoryBackend):
    """Written to the seed: ``write(self, content)`` and nothing else."""

    id = "seed-write"
    name = "Seed write"

    def read(self) -> str:
        return _Store.text

    def write(self, content):  # noqa: ANN001 (as a plugin author writes it)
        _Store.text = content


class SourceOnly(SeedWrite):
    id = "source-only"
    calls: list[dict] = []

    def write(self, content, *, source="write"):  # noqa: ANN001
        SourceOnly.calls.append({"source": source})
        _Store.text = content


class Kwargs(SeedWrite):
    id = "kwargs"
    calls: list[dict] = []

    def write(self, content, **kwargs):  # noqa: ANN001
        Kwargs.calls.append(kwargs)
        _Store.text = content


@pytest.fixture(autouse=True)
def fresh_store():
    _Store.text = "# Project Memory\n"
    SourceOnly.calls.clear()
    Kwargs.calls.clear()


def _backend(cls: type, project: Path):
    registry = MemoryBackendRegistry()
    registry.register(cls)
    return registry.create(cls.id, {}, project)


@pytest.mark.parametrize("cls", [SeedWrite, SourceOnly, Kwargs])
def test_adapter_writes_to_a_backend_of_any_write_signature(project, cls):
    outcome = MemoryFileAdapter(_backend(cls, project)).write("# Project Memory\n\n- new\n", source="editor")
    assert outcome.success, outcome.error
    assert _Store.text == "# Project Memory\n\n- new\n"


def test_extras_reach_only_backends_that_declare_them(project):
    MemoryFileAdapter(_backend(SourceOnly, project)).write("a", source="editor")
    MemoryFileAdapter(_backend(Kwargs, project)).write("b", expected_hash=fileio.content_hash("a"), source="cli")
    assert SourceOnly.calls == [{"source": "editor"}]
    assert Kwargs.calls == [{"expected_hash": fileio.content_hash("a"), "source": "cli"}]


def test_a_stale_save_is_still_a_conflict_for_a_backend_without_expected_hash(project):
    adapter = MemoryFileAdapter(_backend(SeedWrite, project))
    _Store.text = "# Project Memory\n\n- written by an agent\n"
    outcome = adapter.write("mine", expected_hash=fileio.content_hash("# Project Memory\n"))
    assert outcome.code == "CONFLICT" and _Store.text.endswith("written by an agent\n")


class Plain:
    """A backend class that does not derive from MemoryBackend (the seed's interface, duck-typed)."""

    id = "plain"
    name = "Plain"
    version = "0.1.0"
    capabilities = {"read", "write"}

    def __init__(self):
        self.root = None
        self.text = ""

    def initialize(self, config, root):  # noqa: ANN001
        self.root = root

    def read(self):
        return self.text

    def write(self, content):  # noqa: ANN001
        self.text = content


class PlainWithConfig(Plain):
    id = "plain-config"

    def __init__(self, config):  # noqa: ANN001
        super().__init__()
        self.config = config


@pytest.mark.parametrize("cls", [Plain, PlainWithConfig])
def test_registry_registers_a_plain_backend_class(project, cls):
    registry = default_registry()
    assert registry.register(cls) == cls.id
    backend = resolve_memory_backend({"memoryBackend": cls.id}, project, registry)
    assert backend.fallback_reason is None and backend.id == cls.id
    assert backend.has_capability("write") and not backend.has_capability("search")
    adapter = MemoryFileAdapter(backend)
    assert adapter.write("# Project Memory\n\n- plain\n").success
    assert adapter.read() == "# Project Memory\n\n- plain\n"
    assert registry.info(cls.id).name == "Plain"


class ExitsOnInit(SeedWrite):
    id = "exits"

    def initialize(self, config, root):  # noqa: ANN001
        raise SystemExit(3)


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("cannot print me")


class UnprintableOnInit(SeedWrite):
    id = "unprintable"

    def initialize(self, config, root):  # noqa: ANN001
        raise UnprintableError


@pytest.mark.parametrize("cls", [ExitsOnInit, UnprintableOnInit])
def test_initialize_that_exits_or_cannot_print_falls_back_to_file(project, cls):
    registry = default_registry()
    registry.register(cls)
    backend = resolve_memory_backend({"memoryBackend": cls.id}, project, registry)
    assert backend.id == "file" and cls.id in backend.fallback_reason
    assert type(backend.fallback_reason) is str and "\n" not in backend.fallback_reason


def test_keyboard_interrupt_in_initialize_still_propagates(project):
    class Interrupted(SeedWrite):
        id = "interrupted"

        def initialize(self, config, root):  # noqa: ANN001
            raise KeyboardInterrupt

    registry = default_registry()
    registry.register(Interrupted)
    with pytest.raises(KeyboardInterrupt):
        resolve_memory_backend({"memoryBackend": "interrupted"}, project, registry)


@pytest.mark.parametrize("value", [None, b"bytes", 42, ["list"], type("S", (str,), {})("sub")])
def test_adapter_read_always_returns_a_str(project, value):
    class Odd(SeedWrite):
        id = "odd"

        def read(self):
            return value

    adapter = MemoryFileAdapter(_backend(Odd, project))
    text = adapter.read()
    assert type(text) is str
    if isinstance(value, str):
        assert text == "sub" and adapter.last_read_error is None
    elif value is None:
        assert text == ""
    else:
        assert text == "" and adapter.last_read_error.code == "READ_FAILED"


@pytest.mark.parametrize("raised", [UnprintableError(), SystemExit(1), ValueError("plain")])
def test_adapter_write_never_raises(project, raised, capsys):
    class Bad(SeedWrite):
        id = "bad"

        def write(self, content):  # noqa: ANN001
            raise raised

        def read(self):
            raise raised

    adapter = MemoryFileAdapter(_backend(Bad, project))
    outcome = adapter.write("x")
    assert not outcome.success and isinstance(outcome.error, str)
    assert adapter.read() == "" and adapter.last_read_error is not None
    assert "Logging error" not in capsys.readouterr().err
