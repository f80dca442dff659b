"""Every key of Fusion's *project* settings with the JSON type Fusion gives it, and Fusion's global-only keys.

memdesk models Fusion's memory settings (:mod:`core.settings.schema`); the rest of Fusion's project settings
(``autoMerge``, ``maxConcurrent``, ``mergeStrategy``, …) it does not use, but Fusion's dashboard run on
``memdesk serve`` changes them through ``PUT /api/settings``, so memdesk takes them, checks each against the
JSON type below, bounds its size, and writes it through the project's settings store like its own Fusion keys.

Read (never copied, nothing generated at runtime) from Runfusion/Fusion
``packages/core/src/config/settings-schema.ts`` at ``00982d1c8c3136c42b226cf3472c951933701f24``, the
newest version of that file in the index (an older one, ``d0665e98``, lacks keys such as
``worktreeLimitEnabled`` and ``knowledgeGraphDir``): ``PROJECT_SETTINGS_KEYS`` is the keys of
``DEFAULT_PROJECT_SETTINGS`` plus ``NON_DEFAULT_PROJECT_SETTINGS_KEYS``; ``isGlobalOnlySettingsKey`` is a key
of ``DEFAULT_GLOBAL_SETTINGS`` that is not a project key. A key's type is the JSON type of its default
there; for a key whose default is ``undefined`` the type was taken from what the key holds (a provider,
model id, thinking level, command, URL, template or path: a string; ``…Enabled``: a boolean; a count or
``…Ms``: a number), and where that was not plain from the schema file the key takes any JSON value
(``ANY``), still bounded in size. Fusion's own ``PUT /api/settings`` checks the type of
``memoryBackendType`` alone (docs/settings.md), so each check here is at least as strict as Fusion's.
Nine of those ``undefined`` keys were typed from the ``ProjectSettings`` interface of
``packages/core/src/types.ts`` (the index's version of 143,478 characters, whose commit the index does not
name): ``approvedWorkflowCliCommands``/``approvedCliAutonomyAdapters`` ``string[]``, ``engineLastActiveAt``,
``reliabilityStatsResetAt`` ``string``, ``testMode`` ``boolean``, ``voiceInput``/``secretsEnv`` objects,
``taskEvaluationRetention`` ``number``.

``experimentalFeatures`` is global-only in Fusion; memdesk serves no ``/api/settings/global``, and its
``GET /api/settings`` answers the flags from the project's store (the dashboard's Memory view reads
``experimentalFeatures.memoryView``), so memdesk's ``PUT /api/settings`` takes it too, as an object of
booleans (:data:`MEMDESK_SERVED_GLOBAL`); on a running Fusion it goes to Fusion's global settings.
"""

from __future__ import annotations

import json
from typing import Any

from core.errors import SettingsError
from core.settings.fusion_global_keys import global_key_type, in_global_scope

FUSION_COMMIT = "00982d1c8c3136c42b226cf3472c951933701f24"

BOOLEAN, NUMBER, STRING, ARRAY, OBJECT, FLAGS, ANY = "boolean", "number", "string", "array", "object", "flags", "any"

#: Largest value memdesk takes for one Fusion key, as compact JSON (a settings value, not a document).
MAX_VALUE_BYTES = 64 * 1024
#: Deepest nesting of arrays and objects in one value (Fusion's deepest default, ``researchSettings``, is 3).
MAX_DEPTH = 16
#: Most entries in an object of flags (``experimentalFeatures``), and longest flag name.
MAX_FLAGS = 256
MAX_FLAG_NAME = 128


def _keys(kind: str, names: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), kind)


def _lanes(*prefixes: str, parts: str) -> str:
    return " ".join(p + s for p in prefixes for s in parts.split())


_LANE = "Provider CredentialInstanceId ModelId ThinkingLevel FallbackProvider FallbackCredentialInstanceId " \
        "FallbackModelId FallbackThinkingLevel"

#: key → JSON type of every key of Fusion's project settings (``PROJECT_SETTINGS_KEYS`` at FUSION_COMMIT).
PROJECT_KEY_TYPES: dict[str, str] = {
    **_keys(BOOLEAN, """
        requireTaskRecommendations globalPause enginePaused worktreeLimitEnabled engineerBacklogAutoClaim
        groupOverlappingFiles ignoreHiddenOverlapPaths allowAbsoluteFileBrowserPaths autoMerge
        autoResolveReviewComments mergeRequestContractShadowEnabled githubNativeAutoMerge pushAfterMerge
        showWorktreeGrouping showCostBadgeOnCards rightSidebarEnabled executorAllowSiblingBranchRename
        commitMsgHookEnabled includeTaskIdInCommit commitAuthorEnabled autoSelectModelPreset autoResolveConflicts
        smartConflictResolution worktreeRebaseBeforeMerge worktreeRebaseLocalBase prerebaseAutoEnabled
        executorModelEscalationEnabled scopeVerificationToChangedFiles ephemeralAgentsCanCreateTasks
        specStalenessEnabled capacityRiskBannerEnabled backlogPressureAlertEnabled autoUnpauseEnabled
        preserveProgressOnStuckRequeue autoUpdatePrStatus githubCommentOnDone githubCloseSourceIssueOnDone
        githubTrackingEnabledByDefault sessionAdvisorEnabledByDefault githubLinkImportedIssuesToTracking
        reportRoadmapDedupeEnabled gitlabEnabled jiraEnabled gitlabCommentOnDone gitlabCloseSourceIssueOnDone
        githubTrackingDedupEnabled memoryBackupEnabled autoSummarizeTitles taskDefinitionInInputLanguage
        useAiMergeCommitSummary githubImportAutoTranslate insightExtractionEnabled taskEvaluationEnabled
        memoryEnabled stashVectorSearch executorSessionCaptureEnabled executorSessionCaptureIncludeStatus
        memoryAutoSummarizeEnabled memoryDreamsEnabled reflectionAfterTask mobileNavMenuSwipeGesture
        showTaskChatsInCommonFeed researchEnabled
    """),
    **_keys(NUMBER, """
        maxRecommendationsPerTask maxConcurrent maxConcurrentVerifications maxWorktrees pollIntervalMs
        heartbeatMultiplier autoClaimCandidatesInPrompt tombstoneStickyWindowDays agentToolOutputMaxChars
        mergerAutostashMaxAgeHours prerebaseDivergenceThreshold maxAutoMergeRetries executorToolFailureRetryCount
        executorToolFailureRetryBackoffMs executorToolFailureThreshold buildTimeoutMs verificationCommandTimeoutMs
        specStalenessMaxAgeMs taskStuckTimeoutMs dispatchOscillationThreshold dispatchOscillationWindowMs
        dispatchOscillationSettleMs runtimeStopDrainMs engineActiveSinceMs engineActivationGraceMs
        inReviewStallDeadlockThreshold stalePausedReviewThresholdMs inReviewStalledThresholdMs
        stalePausedTodoThresholdMs pausedScopeDecayMs boardStallSweepWindowMs boardStallBlockedGrowthThreshold
        capacityRiskTodoThreshold backlogPressureRatioThreshold backlogPressureMinTodoCount
        backlogPressureAlertCooldownMs staleHighFanoutBlockerAgeThresholdMs staleInProgressWarningMs
        staleInProgressCriticalMs staleInReviewWarningMs staleInReviewCriticalMs aiSessionTtlMs
        aiSessionCleanupIntervalMs autoUnpauseBaseDelayMs autoUnpauseMaxDelayMs maxStuckKills
        maxBranchConflictRecoveries maxTotalRetriesBeforeFail maintenanceIntervalMs memoryBackupRetention
        insightExtractionMinIntervalMs executorSessionCaptureMaxEvents memoryAutoSummarizeThresholdChars tokenCap
        missionStaleThresholdMs missionMaxTaskRetries missionHealthCheckIntervalMs reflectionIntervalMs
        chatAutoCleanupDays mailAutoCleanupDays operationalLogRetentionDays agentLogFileRetentionDays
        chatRoomRecentVerbatimMessages chatRoomCompactionFetchLimit chatRoomSummaryMaxChars
        researchMaxConcurrentRuns researchDefaultTimeout researchMaxSourcesPerRun researchMaxSynthesisRounds
    """),
    **_keys(STRING, """
        globalPauseReason defaultWorkflowId aiUndoTaskWorkflowId taskCreateWorkflowId refinementTaskWorkflowId
        boardSelectedWorkflowId heartbeatScopeDiscipline heartbeatPromptTemplate planApprovalMode mergeStrategy
        directMergeCommitStrategy mergeIntegrationWorktree mergeAdvanceAutoSync integrationBranch pushRemote
        unavailableNodePolicy owningNodeHandoffPolicy defaultNodeId worktreeInitCommand testCommand buildCommand
        chatMessageLayout navigationPlacement taskDetailDefaultTab worktreesDir taskPrefix commitAuthorName
        commitAuthorEmail defaultProviderOverride defaultCredentialInstanceIdOverride defaultModelIdOverride
        defaultThinkingLevelOverride completionDocumentationMode reviewArtifacts worktreeRebaseRemote
        mergeConflictStrategy executorEscalationProvider executorEscalationModelId executorEscalationNodeId
        mergeStrategyOverlapBehavior postMergeAuditMode mergeAuditAutoRecovery triageDuplicateResolution
        githubCommentTemplate githubTrackingDefaultRepo reportMode reportDiscussionCategory reportRoadmapLabel
        reportRoadmapRepo gitlabInstanceUrl gitlabApiBaseUrl gitlabAuthToken gitlabAuthTokenType jiraBaseUrl
        jiraApiBaseUrl jiraAuthEmail jiraAuthTokenSecretKey jiraAuthTokenSecretScope jiraBranchNameTemplate
        gitlabCommentTemplate githubAuthMode githubAuthToken memoryBackupSchedule memoryBackupDir
        knowledgeGraphDir memoryBackupScope importTranslateTargetLocale importTranslateProvider
        importTranslateCredentialInstanceId importTranslateModelId importTranslateThinkingLevel
        fastCheapProvider fastCheapCredentialInstanceId fastCheapModelId fastCheapThinkingLevel
        prTitlePromptInstructions prDescriptionPromptInstructions setupScript insightExtractionSchedule
        taskEvaluationSchedule taskEvaluationProvider taskEvaluationModelId taskEvaluationFollowUpPolicy
        memoryBackendType stashUrl stashApiKey memoryAutoSummarizeSchedule memoryDreamsSchedule
        chatNewSessionMode chatDefaultKind chatDefaultAgentId chatDefaultModelProvider chatDefaultModelId
        chatDefaultThinkingLevel workspaceMode
    """),
    **_keys(STRING, _lanes("planning", "execution", "validator", "titleSummarizer", "merger", parts=_LANE)),
    **_keys(ARRAY, """
        enabledBuiltinWorkflowIds overlapIgnorePaths worktreeCopyFiles taskAttributionTrailerNames modelPresets
        prerebaseHotFiles mobileNavPrimaryItems
    """),
    **_keys(OBJECT, """
        mcpServers worktrunk defaultPresetBySize merger autoRecovery agentProvisioning sandboxProvisioning
        scripts sqliteMigrationNotice researchSettings sandbox evalSettings
    """),
    **_keys(ANY, """
        requiredChecks defaultAgentPermissionPolicy reportModeByAction reportTarget reportTargetByAction
        taskOutputLanguage scriptMetadata taskTokenBudget agentPrompts promptOverrides
        postgresMigrationInboxMessageSentAt ephemeralAgentTaskCreationPolicy
    """),
    # Defaults left undefined in settings-schema.ts whose type is in ProjectSettings (types.ts):
    **_keys(ARRAY, "approvedWorkflowCliCommands approvedCliAutonomyAdapters"),  # string[]
    **_keys(STRING, "engineLastActiveAt reliabilityStatsResetAt"),
    **_keys(BOOLEAN, "testMode"),
    **_keys(OBJECT, "voiceInput secretsEnv"),  # VoiceInputSettings, SecretsEnvSettings
    **_keys(NUMBER, "taskEvaluationRetention"),
    "agentMemoryInclusionMode": STRING,  # global in Fusion; memdesk models it and sends it there (fusion_api)
}

#: Global-only keys memdesk's ``PUT /api/settings`` takes anyway (see the module's docstring).
MEMDESK_SERVED_GLOBAL: dict[str, str] = {"experimentalFeatures": FLAGS}

_GLOBAL_LANE = "Provider CredentialInstanceId ModelId FallbackProvider FallbackCredentialInstanceId FallbackModelId " \
               "FallbackThinkingLevel ThinkingLevel"

#: Fusion's global-only settings (``isGlobalOnlySettingsKey`` at FUSION_COMMIT): refused on a project.
GLOBAL_ONLY_KEYS: frozenset[str] = frozenset("""
    embeddedPostgresMaxConnections anthropicAuthPreference themeMode colorTheme uiStyle shadcnCustomColors
    dashboardFontScalePct autoBackupEnabled autoBackupSchedule autoBackupRetention autoBackupDir
    backupSettingsMigrationConflicts localNetworkDiscoveryEnabled dashboardKeyboardShortcuts
    dismissModalsOnOutsideClick skipConfirmationDialogs quickAddSubmitOnEnter chatSubmitOnEnter operatorLanguage
    chatSnippets language defaultProvider defaultCredentialInstanceId defaultModelId modelPricingOverrides
    modelPricingFetchedAt modelPricingSource modelRouterEnabled modelRouterCheapProvider modelRouterCheapModelId
    fallbackProvider fallbackCredentialInstanceId fallbackModelId fallbackThinkingLevel defaultThinkingLevel
    ntfyEnabled agentClarificationEnabled ntfyTopic ntfyBaseUrl ntfyAccessToken ntfyEvents ntfyDashboardHost
    failureNotificationDelayMs wedgeNotificationSettleMs failureNotificationMode webhookEnabled webhookUrl
    webhookFormat webhookEvents notificationProviders customProviders defaultProjectId setupComplete
    cliOnboardingCompletedAt githubStarPromptDismissedAt favoriteProviders favoriteModels openrouterModelSync
    openrouterAppAttribution openrouterModelFilters openrouterProviderPreferences orcarouterModelSync
    opencodeGoModelSync updateCheckEnabled fnBinaryCheckEnabled updateCheckFrequency updateChannel
    autoUpdateAndRestart autoUpdateEnabled autoRestartAfterUpdate modelOnboardingComplete useClaudeCli
    useDroidCli useLlamaCpp useCursorCli cursorCliBinaryPath useGrokCli grokCliBinaryPath useOmpCli
    ompCliBinaryPath daemonToken daemonPort daemonHost settingsSyncEnabled settingsSyncAuth settingsSyncInterval
    settingsSyncConflictResolution dashboardCurrentNodeId dashboardCurrentProjectIdByNode vitestAutoKillEnabled
    vitestKillThresholdPct persistAgentToolOutput proactiveTaskChatEnabled persistAgentThinkingLogPermanent
    persistAgentThinkingLogEphemeral persistAgentThinkingLog secretsAccessPolicy secretsSyncPassphraseConfigured
    researchGlobalDefaults researchGlobalEnabled researchGlobalMaxConcurrentRuns researchGlobalDefaultTimeout
    researchGlobalMaxSourcesPerRun researchGlobalMaxSynthesisRounds researchGlobalWebSearchProvider
    researchGlobalSearxngUrl researchGlobalBraveApiKey researchGlobalGoogleSearchApiKey
    researchGlobalGoogleSearchCx researchGlobalTavilyApiKey researchGlobalGitHubEnabled
    researchGlobalLocalDocsEnabled researchGlobalMaxSearchResults researchGlobalFetchTimeoutMs
    researchGlobalUserAgent remoteAccess experimentalFeatures cliAgents
""".split()) | frozenset(
    _lanes("executionGlobal", "planningGlobal", "validatorGlobal", "mergerGlobal", parts=_GLOBAL_LANE).split()
) | frozenset("""
    titleSummarizerGlobalProvider titleSummarizerGlobalCredentialInstanceId titleSummarizerGlobalModelId
    titleSummarizerGlobalThinkingLevel importTranslateGlobalProvider importTranslateGlobalCredentialInstanceId
    importTranslateGlobalModelId importTranslateGlobalThinkingLevel fastCheapGlobalProvider
    fastCheapGlobalCredentialInstanceId fastCheapGlobalModelId fastCheapGlobalThinkingLevel
""".split())

_TYPE_CHECKS = {
    BOOLEAN: lambda v: isinstance(v, bool),
    NUMBER: lambda v: isinstance(v, int | float) and not isinstance(v, bool) and v == v and abs(v) != float("inf"),
    STRING: lambda v: isinstance(v, str),
    ARRAY: lambda v: isinstance(v, list),
    OBJECT: lambda v: isinstance(v, dict),
    FLAGS: lambda v: isinstance(v, dict),
    ANY: lambda v: True,
}
_ARTICLE = {BOOLEAN: "a boolean", NUMBER: "a number", STRING: "a string", ARRAY: "an array", OBJECT: "an object",
            FLAGS: "an object of booleans", ANY: "a JSON value"}


def fusion_key_type(key: str) -> str | None:
    """The JSON type memdesk checks for a Fusion key it takes on a project, or ``None`` if it takes none; Fusion's
    global keys are taken only in a change made through ``PUT /api/settings/global``
    (:mod:`core.settings.fusion_global_keys`)."""
    found = PROJECT_KEY_TYPES.get(key) or MEMDESK_SERVED_GLOBAL.get(key)
    if found is None and in_global_scope():
        return global_key_type(key)
    return found


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_DEPTH:
        return level
    if isinstance(value, dict):
        return max((_depth(v, level + 1) for v in value.values()), default=level + 1)
    if isinstance(value, list):
        return max((_depth(v, level + 1) for v in value), default=level + 1)
    return level


def _shown(value: Any) -> str:
    if isinstance(value, bool | int | float | type(None)):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 40 else value[:40] + "…")
    if isinstance(value, dict):
        return "an object"
    return "an array" if isinstance(value, list) else type(value).__name__


def _name(key: str) -> str:
    return repr(key) if len(key) <= 80 else repr(key[:80]) + "…"


def check_fusion_value(key: str, value: Any) -> None:
    """Raise :class:`SettingsError` (one line, naming ``key``) unless ``value`` may be stored under ``key``.

    ``None`` (delete the key) is always taken for a key memdesk takes. A key Fusion keeps globally is refused
    with where it belongs; any other key Fusion does not have is refused as unknown.
    """
    kind = fusion_key_type(key)
    if kind is None:
        if key in GLOBAL_ONLY_KEYS or global_key_type(key) is not None:
            raise SettingsError(
                f"{_name(key)} is one of Fusion's global settings, not a project's: change it with "
                "PUT /api/settings/global (as Fusion's dashboard does)", field=key, reason="global setting")
        raise SettingsError(f"unknown setting {_name(key)}: neither memdesk's nor one of Fusion's project settings "
                            f"(Runfusion/Fusion {FUSION_COMMIT[:8]})", field=key, reason="unknown setting")
    if value is None:
        return
    if not _TYPE_CHECKS[kind](value):
        raise SettingsError(f"invalid setting {key} = {_shown(value)}: Fusion's {key} is {_ARTICLE[kind]}",
                            field=key, reason=f"not {_ARTICLE[kind]}")
    try:
        size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError, RecursionError) as exc:
        raise SettingsError(f"invalid setting {key}: not a JSON value ({type(exc).__name__})", field=key,
                            reason="not a JSON value") from exc
    if size > MAX_VALUE_BYTES:
        raise SettingsError(f"invalid setting {key}: {size} bytes of JSON, more than the {MAX_VALUE_BYTES} a "
                            "setting may hold", field=key, reason="too large")
    if _depth(value) > MAX_DEPTH:
        raise SettingsError(f"invalid setting {key}: nested more than {MAX_DEPTH} levels deep", field=key,
                            reason="too deep")
    if kind == FLAGS:
        if len(value) > MAX_FLAGS:
            raise SettingsError(f"invalid setting {key}: {len(value)} flags, more than {MAX_FLAGS}", field=key,
                                reason="too many flags")
        for name, flag in value.items():
            if not name or len(name) > MAX_FLAG_NAME:
                raise SettingsError(f"invalid setting {key}: a flag name must be 1 to {MAX_FLAG_NAME} characters",
                                    field=key, reason="bad flag name")
            if not isinstance(flag, bool):
                raise SettingsError(f"invalid setting {key}.{name} = {_shown(flag)}: each of {key} is a boolean",
                                    field=key, reason="not a boolean")
