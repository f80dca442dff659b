"""The main window's two extraction dialogs: "Run extraction…" (per project) and "Model providers…" (per user).

Built on first use; the main window creates this host lazily (it imports ``core``) and tells it which
project is open. Each dialog is one instance, shown again when asked for; the providers dialog's
changes reach the extraction dialog's provider list.
"""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from gui.session import ProjectSession
from gui.widgets.extraction_dialog import ExtractionDialog
from gui.widgets.providers_dialog import ProvidersDialog


class DialogHost(QObject):
    """Owns the extraction dialog of the open project and the user's providers dialog."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.session: ProjectSession | None = None
        self.extraction: ExtractionDialog | None = None
        self.providers: ProvidersDialog | None = None

    def set_session(self, session: ProjectSession | None) -> None:
        """Follow the open project; the previous project's dialog is closed (a run in flight is cancelled)."""
        if self.extraction is not None:
            self.extraction.reject()
            self.extraction.deleteLater()
            self.extraction = None
        self.session = session

    def show_extraction(self) -> ExtractionDialog | None:
        """Show the extraction dialog of the open project (``None`` when no project is open)."""
        if self.session is None:
            return None
        if self.extraction is None:
            self.extraction = ExtractionDialog(self.session, self.window)
            self.extraction.providersRequested.connect(self.show_providers)
        else:
            self.extraction.reload_providers()
        _bring_up(self.extraction)
        return self.extraction

    def show_providers(self) -> ProvidersDialog:
        """Show the Model providers dialog."""
        if self.providers is None:
            self.providers = ProvidersDialog(self.window)
            self.providers.providersChanged.connect(
                lambda: self.extraction.reload_providers() if self.extraction is not None else None)
        else:
            self.providers.reload()
        _bring_up(self.providers)
        return self.providers


def _bring_up(dialog: QWidget) -> None:
    """Show ``dialog``, or bring it to the front when it is open already."""
    if dialog.isVisible():
        dialog.raise_()
        dialog.activateWindow()
    else:
        dialog.show()
