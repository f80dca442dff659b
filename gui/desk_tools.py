"""The desk's reach-for tools, built on first use and wired to the window's actions.

Find in all documents, quick open, the command palette, new documents, the Activity view and
Preferences live in their own modules; this object owns their instances for the open project so
:mod:`gui.main_window` only connects actions to it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QDialog

if TYPE_CHECKING:
    from gui.local_server import LocalServer
    from gui.main_window import MainWindow
    from gui.side_editing import SideEditing
    from gui.widgets.document_tabs import DocumentTabs
    from gui.widgets.find_all_dialog import FindAllDialog
    from gui.widgets.fuzzy_picker import FuzzyPicker
    from gui.widgets.preferences_dialog import PreferencesDialog
    from gui.widgets.side_document import SideDocument


def unsaved_text(window: MainWindow, relpath: str) -> str | None:
    """The editor's text of ``relpath`` when it has unsaved edits, else ``None``."""
    editor = window.editor
    if editor is None:
        return None
    slot = editor.buffer.slots.get(relpath)
    if slot is None or not slot.document.isModified():
        return None
    if slot is editor.buffer.slot:
        return editor.buffer.text()
    return slot.document.toRawText().replace("\u2029", "\n")


class DeskTools(QObject):
    """Per-window owner of the tool dialogs; :meth:`reset` drops them when the project changes."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.find_all: FindAllDialog | None = None
        self._server: LocalServer | None = None
        self.preferences: PreferencesDialog | None = None
        self.side: SideDocument | None = None
        self.side_editing: SideEditing | None = None  # its edits reach the editor (gui.side_editing)
        #: The open documents' tabs above the editor (built with each project).
        self.tabs: DocumentTabs | None = None
        self.quick_open: FuzzyPicker | None = None
        self.palette: FuzzyPicker | None = None
        #: Opens a URL (a document, a folder); tests replace it.
        self.open_url: Callable[[QUrl], bool] = QDesktopServices.openUrl
        #: Starts a program (reveal in the file manager); tests replace it.
        self.launch: Callable[[list[str]], bool] | None = None
        #: Shows the New document dialog; True when the operator chose Create/Open (tests replace it).
        self.ask_new_document: Callable[[QDialog], bool] = lambda dialog: bool(dialog.exec())

    def reset(self) -> None:
        """The project changed (or closed): the dialogs built for the old one go, the local server stops."""
        if self._server is not None:
            self._server.stop()
        self.tabs = None  # it goes with the editor
        if self.side is not None:
            self.side.setParent(None)
            self.side.deleteLater()
            self.side = None
        if self.preferences is not None:
            self.preferences.close()
            self.preferences.deleteLater()
            self.preferences = None
        if self.find_all is not None:
            self.find_all.close()
            self.find_all.deleteLater()
            self.find_all = None

    def show_find_all(self) -> FindAllDialog | None:
        """Open Find in all documents (pre-filled with the editor's one-line selection)."""
        window = self.window
        if window.session is None:
            window.show_error("Open a project first: find searches a project's documents.")
            return None
        if self.find_all is None:
            from gui.find_all import DocumentTexts
            from gui.widgets.find_all_dialog import FindAllDialog

            session = window.session
            texts = DocumentTexts(lambda: [(d.path, d.size, d.updated_at) for d in session.documents()],
                                  session.project.read, lambda path: unsaved_text(window, path))
            self.find_all = FindAllDialog(texts, window, worker=session.worker)
            self.find_all.openAtLine.connect(window.open_document)
        selected = window.editor.text_edit.textCursor().selectedText() if window.editor else ""
        self.find_all.open_with(selected if selected and "\u2029" not in selected else None)
        return self.find_all

    def show_quick_open(self) -> FuzzyPicker | None:
        """Quick open (Ctrl+P): every document of the project, fuzzy; Enter opens the one selected."""
        window = self.window
        if window.session is None:
            window.show_error("Open a project first: quick open lists a project's documents.")
            return None
        from gui.widgets.fuzzy_picker import FuzzyPicker, PickItem

        if self.quick_open is None:
            self.quick_open = FuzzyPicker("Open a document by name: type any part of its path", window,
                                          name="quickOpen")
            self.quick_open.chosen.connect(lambda path: window.open_document(str(path)))
        docs = window.session.documents()
        unsaved = set(window.editor.unsaved_documents()) if window.editor else set()
        self.quick_open.set_items([PickItem(d.path, ("● " if d.path in unsaved else "") + d.label, d.path)
                                   for d in docs])
        self.quick_open.popup(window)
        return self.quick_open

    def show_palette(self) -> FuzzyPicker:
        """The command palette (Ctrl+Shift+P): every enabled action of the window by menu and name."""
        from gui.widgets.fuzzy_picker import FuzzyPicker, PickItem
        from gui.widgets.shortcuts_dialog import action_scope

        window = self.window
        if self.palette is None:
            self.palette = FuzzyPicker("Run a command: type any part of its name", window, name="commandPalette")
            self.palette.chosen.connect(lambda action: action.trigger())
        items: list[PickItem] = []
        seen: set[str] = set()
        for name, action in window.actions_by_name.items():
            text = action.text().replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip(".…")
            if not text or not action.isEnabled() or name in ("palette",):
                continue
            label = f"{action_scope(action)}: {text}"
            if label in seen:
                continue
            seen.add(label)
            keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts())
            items.append(PickItem(label, keys, action))
        self.palette.set_items(items)
        self.palette.popup(window)
        return self.palette

    def new_document(self) -> str | None:
        """File ▸ New document… (Ctrl+N): create a daily note, an agent's memory or DREAMS.md, then open it."""
        window = self.window
        session = window.session
        if session is None:
            window.show_error("Open a project first: documents are created in a project.")
            return None
        from gui.widgets.new_document_dialog import NewDocumentDialog

        agents = sorted({d.agent for d in session.documents() if d.agent})
        def exists(relpath: str) -> bool:  # asked as the operator types: the stat or query runs on the worker
            return session.worker.call(lambda: session.project.exists(relpath), "")

        dialog = NewDocumentDialog(session.project.layout, agents, exists, window)
        try:
            if not self.ask_new_document(dialog) or dialog.target.path is None:
                return None
            path = dialog.target.path
            try:
                existed = exists(path)
                if not existed:  # on the project's worker (the create runs through the write pipeline)
                    session.apply(session.worker.call(lambda: session.project.create_document(path),
                                                      f"Creating {path}…"), "create")
            except Exception as exc:
                window.show_error(f"Not created — nothing was written: {exc}")
                return None
        finally:
            dialog.deleteLater()  # after the worker's wait: its loop would delete the dialog in mid-use
        window.open_document(path)
        window.status.show_message(f"Opened {path} (it existed already)" if existed else f"Created {path}")
        return path

    @property
    def server(self) -> LocalServer:
        """The local server (one per window; it serves the open project while started)."""
        if self._server is None:
            from gui.local_server import LocalServer

            self._server = LocalServer(self)
            self._server.stateChanged.connect(self._say_server_state)
        return self._server

    def _say_server_state(self) -> None:
        server = self._server
        if server is not None and server.running:
            self.window.status.show_message(f"Serving {server.root.name if server.root else ''} on {server.url}")

    def show_preferences(self) -> PreferencesDialog:
        """Edit ▸ Preferences… (Ctrl+,): connections, API tokens, the local server."""
        from gui.widgets.preferences_dialog import PreferencesDialog

        window = self.window
        if self.preferences is None:
            self.preferences = PreferencesDialog(self.server, window.session.root if window.session else None, window)
        self.preferences.show()
        from gui.widgets.raise_window import bring_forward

        bring_forward(self.preferences)
        return self.preferences

    # -- the file shown, help ---------------------------------------------------------------------
    def _current_file(self) -> Path | None:
        window = self.window
        if window.session is None:
            window.show_error("Open a project first.")
            return None
        return window.session.root / window.session.current_path

    def copy_path(self, relative: bool = False) -> str | None:
        """File ▸ Copy path (Alt+Shift+C) / Copy relative path: the shown document's path to the clipboard."""
        path = self._current_file()
        if path is None or self.window.session is None:
            return None
        text = self.window.session.current_path if relative else str(path)
        QGuiApplication.clipboard().setText(text)
        self.window.status.show_message(f"Copied {text}")
        return text

    def reveal_current(self) -> str | None:
        """File ▸ Reveal in file manager (Alt+Shift+R): the shown document, selected."""
        from gui.reveal import reveal

        path = self._current_file()
        if path is None:
            return None
        said = reveal(path, self.launch, self.open_url) if self.launch else reveal(path, open_url=self.open_url)
        self.window.status.show_message(said)
        return said

    def show_about(self) -> QDialog:
        """Help ▸ About memdesk."""
        from gui.widgets.about_dialog import AboutDialog

        dialog = AboutDialog(self.window.session.root if self.window.session else None, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def open_doc(self, relpath: str) -> bool:
        """Help ▸ a document: open it (the local copy beside the code) with the system's viewer."""
        from gui.widgets.about_dialog import doc_path

        path = doc_path(relpath)
        if path is None:
            self.window.show_error(f"{relpath} is not beside this installation of memdesk; read it in the "
                                   "memdesk repository.")
            return False
        ok = bool(self.open_url(QUrl.fromLocalFile(str(path))))
        self.window.status.show_message(f"Opened {path}" if ok else f"Could not open {path}")
        return ok

    # -- side by side ----------------------------------------------------------------------------
    def toggle_side(self, path: str | None = None) -> SideDocument | None:
        """View ▸ Open beside (Ctrl+\\): a second document beside the editor, edited there (gui.side_editing),
        or close it."""
        window = self.window
        session = window.session
        if session is None:
            window.show_error("Open a project first.")
            return None
        if self.side is not None and self.side.isVisible() and path is None:
            self.side.close_pane()
            return None
        if self.side is None:
            from gui.side_editing import SideEditing
            from gui.widgets.side_document import SideDocument

            root = session.root
            self.side_editing = SideEditing(window)
            project = session.project  # the pane's reads run on the project's worker (a backend may ask its server)
            self.side = SideDocument(lambda rel: session.worker.call(lambda: project.read(rel), ""),
                                     lambda rel: str(root / rel), window,
                                     editable=self.side_editing.editable, refresh=self.side_editing.refresh,
                                     read_only_reason=self.side_editing.read_only_reason)
            self.side_editing.attach_pane(self.side)
            self.side.editRequested.connect(window.open_document)
            self.side.closed.connect(lambda: window.editor is not None and window.editor.text_edit.setFocus())
            session.documentsChanged.connect(self._refresh_side)
            window.workspace.addWidget(self.side)
        self._refresh_side()
        docs = [d.path for d in session.documents()]
        if path is None:  # the document after the one being edited, so the two differ
            current = session.current_path
            path = next((p for p in docs if p != current), current)
        self.side.show_document(path)
        self.side.setVisible(True)
        sizes = window.workspace.sizes()
        if len(sizes) == 3:
            total = sum(sizes)
            side = max(total * 3 // 10, 240)
            window.workspace.setSizes([sizes[0], total - sizes[0] - side, side])
        self.side.text.setFocus()
        return self.side

    def save(self) -> bool:
        """File ▸ Save (Ctrl+S): the document being typed in, the pane beside's when the focus is there."""
        editing, editor = self.side_editing, self.window.editor
        if editing is not None and editing.has_focus():
            return editing.save_beside()
        return editor is not None and editor.save()

    def _refresh_side(self) -> None:
        session = self.window.session
        if self.side is not None and session is not None:
            self.side.set_documents([(d.path, d.label) for d in session.documents()])

    # -- document tabs ----------------------------------------------------------------------------
    def attach_tabs(self) -> None:
        """Put the open documents' tabs above the editor of the project just opened."""
        from gui.widgets.document_tabs import DocumentTabs

        window = self.window
        editor, session = window.editor, window.session
        if editor is None or session is None:
            return
        tabs = DocumentTabs(lambda path: path in editor.unsaved_documents(), editor)
        editor.layout().insertWidget(0, tabs)
        tabs.show_document(session.current_path)
        tabs.documentChosen.connect(window.open_document)
        tabs.message.connect(window.status.show_message)
        session.documentChanged.connect(tabs.show_document)
        editor.documentDirtyChanged.connect(tabs.set_dirty)
        self.tabs = tabs
