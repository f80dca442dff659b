"""Fusion's *global* settings with the JSON type Fusion gives each, taken by ``PUT /api/settings/global`` only.

Fusion's dashboard saves its global settings (theme, auto-reload, notifications, model lanes, …) with
``updateGlobalSettings`` → ``PUT /api/settings/global`` (Runfusion/Fusion
``packages/dashboard/app/api/global-and-pi-settings.ts`` at 776e90bf) and reads them back from
``GET /api/settings`` (``app/hooks/useAppSettings.ts`` at a1cac3a6 reads ``autoReloadOnVersionChange`` there).
memdesk takes them on that route alone, each checked against its type as the project keys are
(:mod:`core.settings.fusion_keys`), and writes them through the project's settings store (design §3b): on a
running Fusion they go to Fusion's own ``PUT /api/settings/global``; otherwise into the store the project's
settings live in, beside ``experimentalFeatures``. ``PUT /api/settings`` and ``memdesk settings set`` still
refuse them, as Fusion's project route does.

The keys are :data:`core.settings.fusion_keys.GLOBAL_ONLY_KEYS` (``isGlobalOnlySettingsKey`` of
``packages/core/src/config/settings-schema.ts`` at ``00982d1c8c3136c42b226cf3472c951933701f24``) plus
``autoReloadOnVersionChange``, a boolean global setting in the dashboards that still show its switch (the
``GlobalSettings`` interface of ``packages/core/src/types.ts``; retired at 00982d1c, whose schema says older
persisted values are ignored). A key's type is the JSON type of its default in ``DEFAULT_GLOBAL_SETTINGS`` at
00982d1c; for a default of ``undefined`` it is what the key holds by its name (a provider, model id, credential,
thinking level, path, URL, token, host, id or time: a string; ``use…``, ``…Enabled``, ``…Complete``: a boolean;
a count: a number; a list of favourites or snippets: an array); where that is not plain it is any JSON value,
still bounded in size and depth.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["GLOBAL_KEY_TYPES", "global_key_type", "global_scope", "in_global_scope"]

# The names core.settings.fusion_keys checks by (it imports this module, so they are spelled here too).
BOOLEAN, NUMBER, STRING, ARRAY, OBJECT, FLAGS, ANY = "boolean", "number", "string", "array", "object", "flags", "any"


def _keys(kind: str, names: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), kind)


#: The types of Fusion's global keys memdesk takes on ``PUT /api/settings/global``.
_EXPLICIT: dict[str, str] = {
    **_keys(BOOLEAN, """
        autoBackupEnabled localNetworkDiscoveryEnabled dismissModalsOnOutsideClick skipConfirmationDialogs
        quickAddSubmitOnEnter ntfyEnabled agentClarificationEnabled webhookEnabled openrouterModelSync
        orcarouterModelSync opencodeGoModelSync updateCheckEnabled fnBinaryCheckEnabled autoUpdateAndRestart
        settingsSyncEnabled settingsSyncAuth vitestAutoKillEnabled persistAgentToolOutput proactiveTaskChatEnabled
        persistAgentThinkingLogPermanent persistAgentThinkingLogEphemeral persistAgentThinkingLog
        secretsSyncPassphraseConfigured researchGlobalEnabled researchGlobalGitHubEnabled
        researchGlobalLocalDocsEnabled
        modelRouterEnabled autoUpdateEnabled autoRestartAfterUpdate modelOnboardingComplete setupComplete
        useClaudeCli useDroidCli useLlamaCpp useCursorCli useGrokCli useOmpCli
        autoReloadOnVersionChange"""),
    **_keys(NUMBER, """
        dashboardFontScalePct autoBackupRetention failureNotificationDelayMs wedgeNotificationSettleMs daemonPort
        settingsSyncInterval vitestKillThresholdPct researchGlobalMaxConcurrentRuns researchGlobalDefaultTimeout
        researchGlobalMaxSourcesPerRun researchGlobalMaxSynthesisRounds researchGlobalMaxSearchResults
        researchGlobalFetchTimeoutMs embeddedPostgresMaxConnections"""),
    **_keys(STRING, """
        anthropicAuthPreference themeMode colorTheme uiStyle autoBackupSchedule autoBackupDir operatorLanguage
        updateCheckFrequency updateChannel daemonHost settingsSyncConflictResolution failureNotificationMode
        webhookFormat researchGlobalWebSearchProvider researchGlobalUserAgent
        language defaultProvider defaultCredentialInstanceId defaultModelId modelPricingFetchedAt modelPricingSource
        modelRouterCheapProvider modelRouterCheapModelId fallbackProvider fallbackCredentialInstanceId
        fallbackModelId fallbackThinkingLevel defaultThinkingLevel ntfyTopic ntfyBaseUrl ntfyAccessToken
        ntfyDashboardHost webhookUrl defaultProjectId cliOnboardingCompletedAt githubStarPromptDismissedAt
        cursorCliBinaryPath grokCliBinaryPath ompCliBinaryPath daemonToken dashboardCurrentNodeId
        researchGlobalSearxngUrl researchGlobalBraveApiKey researchGlobalGoogleSearchApiKey
        researchGlobalGoogleSearchCx researchGlobalTavilyApiKey"""),
    **_keys(ARRAY, "ntfyEvents webhookEvents notificationProviders customProviders chatSnippets favoriteProviders "
                   "favoriteModels"),
    **_keys(OBJECT, "dashboardKeyboardShortcuts researchGlobalDefaults remoteAccess cliAgents shadcnCustomColors "
                    "modelPricingOverrides dashboardCurrentProjectIdByNode"),
    **_keys(FLAGS, "experimentalFeatures"),
    # "auto" by default, and not plain from the schema whether a boolean is also taken; the rest have no default.
    **_keys(ANY, "chatSubmitOnEnter backupSettingsMigrationConflicts secretsAccessPolicy openrouterAppAttribution "
                 "openrouterModelFilters openrouterProviderPreferences"),
}

_LANE = "Provider CredentialInstanceId ModelId FallbackProvider FallbackCredentialInstanceId FallbackModelId " \
        "FallbackThinkingLevel ThinkingLevel"
#: The global model lanes (``executionGlobalProvider`` … ``mergerGlobalThinkingLevel``, ``fastCheapGlobal…``): strings.
_LANES = [p + s for p in ("executionGlobal", "planningGlobal", "validatorGlobal", "mergerGlobal") for s in _LANE.split()] \
    + [p + s for p in ("titleSummarizerGlobal", "importTranslateGlobal", "fastCheapGlobal")
       for s in ("Provider", "CredentialInstanceId", "ModelId", "ThinkingLevel")]

GLOBAL_KEY_TYPES: dict[str, str] = {**_EXPLICIT, **dict.fromkeys(_LANES, STRING)}

_GLOBAL_SCOPE: ContextVar[bool] = ContextVar("memdesk_fusion_global_scope", default=False)


def global_key_type(key: str) -> str | None:
    """The JSON type of Fusion's global ``key``, or ``None`` when it is not one of Fusion's global settings."""
    return GLOBAL_KEY_TYPES.get(key)


def in_global_scope() -> bool:
    """Whether the settings change being made came through ``PUT /api/settings/global``."""
    return _GLOBAL_SCOPE.get()


@contextmanager
def global_scope() -> Iterator[None]:
    """While it lasts (in this thread), Fusion's global keys are taken by the settings checks."""
    token = _GLOBAL_SCOPE.set(True)
    try:
        yield
    finally:
        _GLOBAL_SCOPE.reset(token)
