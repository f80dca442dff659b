"""Model providers for insight extraction: an OpenAI-compatible endpoint, a local command, or rules.

Providers are built only from the user's own config (:mod:`core.settings.user_config`), never from a
project's ``.fusion/config.json``: opening a project cannot run its code or send its memory anywhere.
"""

from __future__ import annotations

from core.errors import SettingsError
from core.providers.base import (
    ERROR_KINDS,
    CancelCheck,
    ErrorKind,
    ProgressCallback,
    Provider,
    ProviderError,
    ProviderRequest,
    never_cancelled,
    no_progress,
)
from core.providers.command import CommandProvider
from core.providers.offline import OfflineProvider, rule_based_reply
from core.providers.openai import OpenAIProvider
from core.settings.user_config import ProviderConfig, UserConfig, load_user_config

__all__ = [
    "ERROR_KINDS",
    "CancelCheck",
    "CommandProvider",
    "ErrorKind",
    "OfflineProvider",
    "OpenAIProvider",
    "ProgressCallback",
    "Provider",
    "ProviderError",
    "ProviderRequest",
    "create_provider",
    "never_cancelled",
    "no_progress",
    "resolve_provider",
    "rule_based_reply",
]


def create_provider(name: str, config: ProviderConfig) -> Provider:
    """Build the provider ``name`` described by ``config`` (with its reply cap and deadline)."""
    if config.kind == "openai":
        assert config.base_url and config.model  # guaranteed by ProviderConfig's validation
        return OpenAIProvider(name, config.base_url, config.model, config.api_key_env, config.timeout_s,
                              max_reply_bytes=config.max_reply_bytes, deadline_s=config.deadline_s)
    if config.kind == "command":
        # A command never runs in the project: it gets a fresh temporary folder (design section 6).
        return CommandProvider(name, list(config.command or []), config.timeout_s,
                               max_reply_bytes=config.max_reply_bytes, deadline_s=config.deadline_s)
    return OfflineProvider(name, config.prune_after_days)


def resolve_provider(name: str | None = None, user_config: UserConfig | None = None) -> Provider:
    """Build the user's provider ``name`` (default: the user's default provider).

    An unknown name or an unreadable user config raises :class:`ProviderError` of kind ``config``.
    """
    if user_config is None:
        try:
            user_config = load_user_config()
        except SettingsError as exc:
            raise ProviderError(f"cannot load the user config: {exc}", "config", name or "") from exc
    chosen = name or user_config.default_provider
    config = user_config.providers.get(chosen)
    if config is None:
        known = ", ".join(sorted(user_config.providers))
        raise ProviderError(f"no provider named {chosen!r}; configured providers: {known} "
                            "(add one with `memdesk providers set`)", "config", chosen)
    return create_provider(chosen, config)
