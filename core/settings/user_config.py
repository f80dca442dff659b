"""The user's own memdesk settings: model providers and the unattended-prune opt-in.

They live in ``config.json`` under ``platformdirs.user_config_dir("memdesk")`` (or the folder named
by ``MEMDESK_CONFIG_DIR``), never in a project: anything that runs a command or calls a service is
configured per user, so opening a project cannot run its code or send its memory anywhere
(design, section 6). JSON keys are camelCase (``baseUrl``, ``apiKeyEnv``, ``timeoutS``,
``defaultProvider``, ``autoApplyPrune``, and ``consumers``: load-budget rules of the user's own, see
:mod:`core.budget`); snake_case is accepted on input. API keys are never
stored: a provider names the environment variable that holds its key.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, ParamSpec
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.documents.load_rules import CONSUMER_ID_RE, UserConsumer
from core.errors import MemoryBackendError, SettingsError
from core.storage import fileio, statefiles, userdirs
from core.storage.userdirs import CONFIG_DIR_ENV

P = ParamSpec("P")

__all__ = [
    "CONFIG_DIR_ENV",
    "OFFLINE_PROVIDER",
    "ProviderConfig",
    "UserConfig",
    "load_user_config",
    "remove_provider",
    "save_user_config",
    "set_auto_apply_prune",
    "set_default_provider",
    "set_provider",
    "user_config_dir",
    "user_config_path",
]

OFFLINE_PROVIDER = "offline"
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PROVIDER_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class ProviderConfig(BaseModel):
    """One named provider: an OpenAI-compatible endpoint, a local command, or the offline rules."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    kind: Literal["openai", "command", "offline"] = Field(
        title="Kind", description="openai: a chat-completions endpoint; command: a local program "
        "reading the prompt on stdin; offline: rule-based, no model.")
    base_url: str | None = Field(
        None, alias="baseUrl", title="Base URL",
        description="Endpoint root, e.g. https://api.openai.com/v1 (POST {baseUrl}/chat/completions).")
    model: str | None = Field(None, title="Model", description="The model name sent with each request.")
    api_key_env: str | None = Field(
        None, alias="apiKeyEnv", title="API key variable",
        description="Name of the environment variable holding the API key (read at call time; "
        "leave empty for endpoints without a key).")
    command: list[str] | None = Field(
        None, title="Command", description="Program and arguments; it reads the prompt on stdin "
        "and writes the reply on stdout.")
    timeout_s: float = Field(120.0, alias="timeoutS", gt=0, le=3600, title="Timeout",
                             description="Seconds to wait for the reply.", json_schema_extra={"unit": "s"})
    max_reply_bytes: int | None = Field(
        None, alias="maxReplyBytes", ge=1024, le=256 * 1024 * 1024, title="Largest reply",
        description="A reply (or a command's output) bigger than this many bytes is refused; empty: 8 MiB.",
        json_schema_extra={"unit": "bytes"})
    deadline_s: float | None = Field(
        None, alias="deadlineS", gt=0, le=86400, title="Deadline",
        description="Seconds the whole call may take, however slowly the reply arrives; empty: 600 s "
        "(a command's timeout also ends it).", json_schema_extra={"unit": "s"})
    prune_after_days: int = Field(
        30, alias="pruneAfterDays", ge=1, le=3650, title="Prune dated entries after",
        description="Offline provider: dated entries older than this many days are proposed for pruning.",
        json_schema_extra={"unit": "days"})

    @field_validator("api_key_env")
    @classmethod
    def _check_env_name(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        if not _ENV_NAME_RE.match(value):
            raise ValueError(f"{value!r} is not an environment variable name (letters, digits, _)")
        return value

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value in (None, ""):
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        return value.rstrip("/")

    @model_validator(mode="after")
    def _check_kind(self) -> ProviderConfig:
        if self.kind == "openai" and (not self.base_url or not self.model):
            raise ValueError("an openai provider needs baseUrl and model")
        if self.kind == "command" and (not self.command or not self.command[0].strip()):
            raise ValueError("a command provider needs a command (program and arguments)")
        return self

    def to_json(self) -> dict[str, Any]:
        """The camelCase JSON of this provider, without unset optional fields."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def _default_providers() -> dict[str, ProviderConfig]:
    return {OFFLINE_PROVIDER: ProviderConfig.model_validate({"kind": "offline"})}


class UserConfig(BaseModel):
    """All of the user's memdesk settings; ``offline`` is always among the providers."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    providers: dict[str, ProviderConfig] = Field(default_factory=_default_providers, title="Providers")
    default_provider: str = Field(OFFLINE_PROVIDER, alias="defaultProvider", title="Default provider")
    auto_apply_prune: bool = Field(
        False, alias="autoApplyPrune", title="Apply prunes unattended",
        description="When on, a scheduled run applies a valid, current prune without review. "
        "Off by default: every prune waits for review.")

    consumers: dict[str, UserConsumer] = Field(
        default_factory=dict, title="Load-budget consumers",
        description="Your own load rules, by consumer id (docs/budget.md); an id of a shipped consumer "
        "replaces it.")

    @model_validator(mode="after")
    def _check(self) -> UserConfig:
        for name in self.consumers:
            if not CONSUMER_ID_RE.match(name):
                raise ValueError(f"consumer id {name!r} must be lower-case letters, digits, '.', '_' or '-'")
        for name in self.providers:
            if not _PROVIDER_NAME_RE.match(name):
                raise ValueError(f"provider name {name!r} must be letters, digits, '.', '_' or '-'")
        offline = self.providers.get(OFFLINE_PROVIDER)
        if offline is None:
            self.providers[OFFLINE_PROVIDER] = ProviderConfig.model_validate({"kind": "offline"})
        elif offline.kind != "offline":
            raise ValueError(f"the provider name {OFFLINE_PROVIDER!r} is reserved for the rule-based extractor")
        if self.default_provider not in self.providers:
            raise ValueError(f"default provider {self.default_provider!r} is not configured")
        return self

    def to_json(self) -> dict[str, Any]:
        """The camelCase JSON of the whole file."""
        return {
            "providers": {name: cfg.to_json() for name, cfg in self.providers.items()},
            "defaultProvider": self.default_provider,
            "autoApplyPrune": self.auto_apply_prune,
            **({"consumers": {name: rule.to_json() for name, rule in self.consumers.items()}}
               if self.consumers else {}),
        }


def user_config_dir() -> Path:
    """The folder of the user's config: ``$MEMDESK_CONFIG_DIR``, else the platform's user config dir."""
    return userdirs.user_config_dir()


def user_config_path() -> Path:
    """The user's ``config.json``."""
    return user_config_dir() / "config.json"


def _settings_error(exc: ValidationError, where: str) -> SettingsError:
    err = exc.errors()[0]
    loc = ".".join(str(part) for part in err.get("loc", ()))
    reason = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    return SettingsError(f"{where}: {loc + ': ' if loc else ''}{reason}", field=loc or None, reason=reason)


def read_json_object(path: Path, must_hold: str = "a JSON object") -> dict[str, Any] | None:
    """The JSON object in the user's file ``path``; ``None`` when it is missing or blank.

    :class:`SettingsError` when it cannot be read, is not JSON, or is not an object (``must hold``
    names what it should be); the file is never rewritten because of that.
    """
    try:
        text = fileio.read_text(path)
    except MemoryBackendError as exc:
        raise SettingsError(f"cannot read {path}: {exc}") from exc
    if text is None or not text.strip():
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                            "fix or remove it — memdesk will not overwrite it") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path} must hold {must_hold}")
    return data


def load_user_config() -> UserConfig:
    """Load the user's config (defaults when the file is missing); a broken file raises :class:`SettingsError`."""
    path = user_config_path()
    data = read_json_object(path)
    if data is None:
        return UserConfig.model_validate({})
    try:
        return UserConfig.model_validate(data)
    except ValidationError as exc:
        raise _settings_error(exc, str(path)) from exc


def save_user_config(config: UserConfig) -> Path:
    """Write ``config`` atomically to the user's ``config.json`` and return its path."""
    path = user_config_path()
    text = json.dumps(config.to_json(), indent=2, ensure_ascii=False) + "\n"
    statefiles.write("user-config", None, text, source="user-config", directory=path.parent)
    return path


def _revalidate(data: dict[str, Any]) -> UserConfig:
    try:
        return UserConfig.model_validate(data)
    except ValidationError as exc:
        raise _settings_error(exc, "user config") from exc


def _changed_under_lock(change: Callable[P, UserConfig]) -> Callable[P, UserConfig]:
    """Run a read-change-save of the user config under its state file's lock: another process (the app, a
    second ``memdesk providers set``) changing it at the same moment is not overwritten."""

    @functools.wraps(change)
    def locked(*args: P.args, **kwargs: P.kwargs) -> UserConfig:
        with statefiles.lock("user-config", directory=user_config_path().parent):
            return change(*args, **kwargs)

    return locked


@_changed_under_lock
def set_provider(name: str, settings: ProviderConfig | dict[str, Any]) -> UserConfig:
    """Add or replace the provider ``name`` and save; invalid settings raise :class:`SettingsError`."""
    if isinstance(settings, dict):
        try:
            settings = ProviderConfig.model_validate(settings)
        except ValidationError as exc:
            raise _settings_error(exc, f"provider {name!r}") from exc
    config = load_user_config()
    data = config.to_json()
    data["providers"][name] = settings.to_json()
    updated = _revalidate(data)
    save_user_config(updated)
    return updated


@_changed_under_lock
def remove_provider(name: str) -> UserConfig:
    """Remove the provider ``name`` (not ``offline``); the default falls back to ``offline``."""
    if name == OFFLINE_PROVIDER:
        raise SettingsError("the offline provider is built in and cannot be removed", field="providers")
    config = load_user_config()
    if name not in config.providers:
        raise SettingsError(f"no provider named {name!r}", field="providers")
    data = config.to_json()
    del data["providers"][name]
    if data["defaultProvider"] == name:
        data["defaultProvider"] = OFFLINE_PROVIDER
    updated = _revalidate(data)
    save_user_config(updated)
    return updated


@_changed_under_lock
def set_default_provider(name: str) -> UserConfig:
    """Make ``name`` the default provider and save."""
    config = load_user_config()
    if name not in config.providers:
        known = ", ".join(sorted(config.providers))
        raise SettingsError(f"no provider named {name!r}; configured: {known}", field="defaultProvider")
    updated = _revalidate({**config.to_json(), "defaultProvider": name})
    save_user_config(updated)
    return updated


@_changed_under_lock
def set_auto_apply_prune(enabled: bool) -> UserConfig:
    """Turn the unattended-prune opt-in on or off and save."""
    updated = _revalidate({**load_user_config().to_json(), "autoApplyPrune": bool(enabled)})
    save_user_config(updated)
    return updated
