"""Run an insight extraction from the app: pick a provider, Run, watch the progress, Cancel.

The provider comes from the user's own config (:mod:`core.settings.user_config`; "offline" is always there).
``core.automation.extraction.run_extraction`` runs on a worker thread (``gui.tasks``) and reports its progress
on the GUI thread; Cancel asks it to stop, and the dialog is idle again once it has. A finished run
goes to the session, which reviews the proposal it stored; a failed one says why here (nothing but
the audit changed). ``providersRequested`` asks for the Model providers dialog.
"""

from __future__ import annotations

import html
import threading

import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.automation.extraction import ExtractionRun, run_extraction
from core.errors import SettingsError
from core.providers import ProviderError, resolve_provider
from core.settings.user_config import OFFLINE_PROVIDER, ProviderConfig, UserConfig, load_user_config
from gui.proposal_text import failure_hint, run_outcome
from gui.session import ProjectSession
from gui.tasks import CancelToken, Operation, run_in_background
from gui.widgets.banner import Banner
from gui.widgets.colors import help_colour
from gui.widgets.provider_form import KIND_NAMES

UNCHANGED = "memory.md and memory-insights.md were not changed; the audit records the failure."


def describe_provider(config: ProviderConfig) -> str:
    """One line about what a provider does with the memory."""
    if config.kind == "openai":
        key = f"key from ${config.api_key_env}" if config.api_key_env else "no API key"
        return f"{config.model} at {config.base_url} · {key} · timeout {config.timeout_s:g} s"
    if config.kind == "command":
        return f"runs {' '.join(config.command or [])} · timeout {config.timeout_s:g} s"
    return "Rule-based, on this computer: no model, nothing leaves the machine."


class ExtractionDialog(QDialog):
    """Choose a provider and run one extraction, off the GUI thread, with progress and cancel."""

    extractionFinished = Signal(object)  # ExtractionRun
    providersRequested = Signal()

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Run insight extraction")
        self.session = session
        self.config = UserConfig.model_validate({})
        self.operation: Operation | None = None
        self.last_run: ExtractionRun | None = None
        self._stop: threading.Event | None = None
        intro = QLabel(
            f"Sends <code>.fusion/memory.md</code> and <code>.fusion/memory-insights.md</code> of "
            f"<b>{session.root.name}</b> to the provider you pick. What it proposes is stored for your "
            "review: nothing is merged or pruned until you accept it.", self)
        intro.setWordWrap(True)
        self.provider_combo = QComboBox(self)
        self.providers_button = QPushButton("Model providers…", self)
        self.provider_detail = QLabel(self)
        self.provider_detail.setWordWrap(True)
        pal = self.provider_detail.palette()
        pal.setColor(self.provider_detail.foregroundRole(), help_colour())
        self.provider_detail.setPalette(pal)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 100)
        self.progress_label = QLabel("Ready.", self)
        self.progress_label.setWordWrap(True)
        self.result = Banner(self)
        self.result.label.setTextFormat(Qt.TextFormat.RichText)
        self.run_button = QPushButton("Run", self)
        self.run_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel run", self)
        self.close_button = QPushButton("Close", self)

        picker = QHBoxLayout()
        picker.addWidget(self.provider_combo, 1)
        picker.addWidget(self.providers_button)
        form = QFormLayout()
        form.addRow("Provider:", picker)
        form.addRow("", self.provider_detail)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.progress)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.result)
        layout.addStretch(1)
        layout.addLayout(buttons)
        self.setMinimumWidth(600)

        self.provider_combo.currentIndexChanged.connect(lambda _i: self._show_detail())
        self.providers_button.clicked.connect(self.providersRequested)
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        self.close_button.clicked.connect(self.reject)
        self.reload_providers()
        self._set_running(False)

    # -- providers -----------------------------------------------------------------------------------
    def reload_providers(self) -> None:
        """Read the user's providers again, keeping the current choice when it still exists."""
        current = self.provider_combo.currentData()
        try:  # the user config file: read on the project's worker
            self.config = self.session.worker.call(load_user_config, "")
        except SettingsError as exc:
            self.config = UserConfig.model_validate({})
            self.result.show_message(f"Your provider settings cannot be read: {html.escape(str(exc))}. Only the offline "
                                     "provider is available.", "error")
        names = sorted(self.config.providers, key=lambda n: (n == OFFLINE_PROVIDER, n.lower()))
        self.provider_combo.blockSignals(True)
        self.provider_combo.clear()
        for name in names:
            default = " (default)" if name == self.config.default_provider else ""
            self.provider_combo.addItem(f"{name} — {KIND_NAMES[self.config.providers[name].kind]}{default}", name)
        choice = current or self.config.default_provider
        self.provider_combo.setCurrentIndex(max(0, self.provider_combo.findData(choice)))
        self.provider_combo.blockSignals(False)
        self._show_detail()

    def selected_provider(self) -> str:
        """The name of the provider chosen."""
        return str(self.provider_combo.currentData() or OFFLINE_PROVIDER)

    def select_provider(self, name: str) -> None:
        """Choose the provider ``name`` (as the operator would)."""
        self.provider_combo.setCurrentIndex(self.provider_combo.findData(name))

    def _show_detail(self) -> None:
        config = self.config.providers.get(self.selected_provider())
        self.provider_detail.setText(describe_provider(config) if config else "")

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt override)
        """Fit the wrapped text when shown."""
        super().showEvent(event)
        self._fit()

    # -- running -------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True while a run is in flight (cancelling included)."""
        return self.operation is not None

    def run(self) -> bool:
        """Start an extraction with the chosen provider; False when it cannot start."""
        if self.running:
            return False
        self.result.clear()
        try:
            provider = resolve_provider(self.selected_provider(), self.config)
        except ProviderError as exc:
            self.result.show_message(f"Cannot start: {html.escape(exc.message)}", "error")
            self._fit()
            return False
        root, stop = self.session.root, threading.Event()
        self._stop = stop

        def work(token: CancelToken) -> ExtractionRun:
            return run_extraction(root, provider, cancel=lambda: token.cancelled or stop.is_set(),
                                  progress=token.progress)

        self.progress.setValue(0)
        self.progress_label.setText(f"Starting {provider.name}…")
        # Parented to the session, not the dialog: a run outlives a closed dialog and still reports.
        self.operation = run_in_background(work, self._on_done, self._on_error, self._on_progress,
                                           parent=self.session)
        self._set_running(True)
        return True

    def cancel(self) -> None:
        """Ask the run to stop; the dialog is idle again once it has (nothing is stored)."""
        if self._stop is not None and self.running:
            self._stop.set()
            self.progress_label.setText("Cancelling…")
            self.cancel_button.setEnabled(False)

    def _on_progress(self, percent: int, message: str) -> None:
        if shiboken6.isValid(self) and self._stop is not None and not self._stop.is_set():
            self.progress.setValue(percent)
            self.progress_label.setText(message)

    def _on_done(self, run: ExtractionRun) -> None:
        self.operation, self.last_run = None, run
        try:  # the session hears of the run even when this dialog was closed meanwhile
            proposal, failure = self.session.extraction_finished(run), None
        except Exception as exc:  # the proposal is stored; say that it could not be opened
            proposal, failure = None, exc
        outcome = run_outcome(run, proposal)
        self.session.statusMessage.emit(outcome)
        if not shiboken6.isValid(self):
            return
        self._set_running(False)
        if failure is not None:
            self.result.show_message("The extraction finished but its proposal cannot be opened: "
                                     f"{html.escape(str(failure))}", "error")
        elif run.ok:
            self.progress.setValue(100)
            self.progress_label.setText("Done.")
            where = " Review it in Insights and Prune review." if proposal is not None else ""
            self.result.show_message(html.escape(outcome) + "." + where, "ok")
        elif run.status == "cancelled":
            self.progress.setValue(0)
            self.progress_label.setText("Cancelled.")
            self.result.show_message("Cancelled: nothing was stored and the memory is unchanged.", "info")
        else:
            self.progress.setValue(0)
            self.progress_label.setText("Failed.")
            hint = failure_hint(run)
            self.result.show_message(f"<b>Extraction failed.</b> {html.escape(run.message)}<br>"
                                     f"{hint + ' ' if hint else ''}{UNCHANGED}", "error")
        self._fit()
        self.extractionFinished.emit(run)

    def _on_error(self, exc: BaseException) -> None:  # run_extraction never raises; a bug still shows
        self.operation = None
        self.session.auditChanged.emit()
        if not shiboken6.isValid(self):
            return
        self._set_running(False)
        self.progress_label.setText("Failed.")
        self.result.show_message(f"The extraction stopped unexpectedly: {html.escape(str(exc))}", "error")
        self._fit()

    def _fit(self) -> None:
        """Grow to show wrapped text in full (word-wrapped labels do not raise a window's minimum height)."""
        layout = self.layout()
        layout.activate()
        needed = layout.totalHeightForWidth(self.width())
        if needed > self.height():
            self.resize(self.width(), needed)

    def _set_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        self.provider_combo.setEnabled(not running)
        self.providers_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)

    def reject(self) -> None:
        """Close; a run in flight is cancelled first (it reports, and the audit records it, when it stops)."""
        self.cancel()
        super().reject()
