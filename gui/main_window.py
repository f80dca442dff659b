"""memdesk's main window: the composition root. It builds the tabs, menus and status bar for one open
project, wires their signals in :meth:`MainWindow._connect_signals` / :meth:`_connect_project`, and
holds no editing logic of its own.

Start-up stays fast: the window shell imports no ``core`` code, so ``memdesk`` can show it before
the project is opened; views other than the editor are built the first time they are shown
(:mod:`gui.view_tabs`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from PySide6.QtCore import QMimeData, Qt
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QStackedWidget,
    QWidget,
)

from gui.desk_tools import DeskTools
from gui.documents_watcher import DocumentsWatcher
from gui.recent import RecentProjects
from gui.save_all import SAVE_ALL_KEYS
from gui.serial_worker import SerialWorker
from gui.status_bar import StatusBar
from gui.theme import MODES, ThemeManager
from gui.view_tabs import ViewFactory, ViewTabs
from gui.watcher import BackendChangeWatcher, MemoryFileWatcher

if TYPE_CHECKING:  # imported when a project is opened, to keep core off the start-up path
    from gui.dialog_host import DialogHost
    from gui.editor.memory_editor import MemoryEditor
    from gui.session import ProjectSession
    from gui.widgets.document_picker import DocumentPicker

log = logging.getLogger(__name__)

Choice = Literal["save", "discard", "cancel"]
#: The window's first size: with a title bar and a panel it fits a 1280x800 screen.
DEFAULT_SIZE = (1200, 720)


class MainWindow(QMainWindow):
    """One open project: editor and views in tabs, menus with shortcuts, status bar.

    ``project`` is opened right away; without it the window starts empty (``memdesk`` shows it,
    then opens the project it was given or the sample copy).
    """

    def __init__(self, project: str | Path | None = None, *, recent: RecentProjects | None = None,
                 theme: ThemeManager | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.resize(*default_size())
        self.setAcceptDrops(True)
        self.recent = recent or RecentProjects()
        #: The window's own small reads and writes off the GUI thread: a folder's check, the recent list (its
        #: folders' checks, QSettings' file).
        self.io = SerialWorker(self)
        #: The light/dark theme (``memdesk`` passes the persisted one; by default nothing is stored).
        self.theme = theme or ThemeManager(persist=False, parent=self)
        #: Asked before unsaved edits would be lost; returns "save", "discard" or "cancel".
        self.confirm_discard: Callable[[], Choice] = self._ask_discard
        #: Shows an error to the operator (tests replace it).
        self.show_error: Callable[[str], None] = lambda text: QMessageBox.warning(self, "memdesk", text)
        self.session: ProjectSession | None = None
        self.editor: MemoryEditor | None = None
        self._watched_backend: object | None = None
        self._dialogs: DialogHost | None = None
        self.tabs = ViewTabs(self)
        self.placeholder = QLabel("No project open.\n\nFile ▸ Open project folder… (Ctrl+O), or drop a folder here.")
        self.placeholder.setObjectName("placeholder")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.pages = QStackedWidget(self)
        self.pages.addWidget(self.placeholder)
        #: The document picker (built with the first project) beside the tabs.
        self.picker: DocumentPicker | None = None
        self.workspace = QSplitter(Qt.Orientation.Horizontal, self)
        self.workspace.setObjectName("workspace")
        self.workspace.setChildrenCollapsible(False)
        self.workspace.addWidget(self.tabs)
        self.pages.addWidget(self.workspace)
        self.setCentralWidget(self.pages)
        self.status = StatusBar(self)
        self.setStatusBar(self.status)
        self.watcher = MemoryFileWatcher(parent=self)
        #: Another host's committed changes, when the backend announces them (postgres LISTEN/NOTIFY).
        self.backend_watcher = BackendChangeWatcher(parent=self)
        #: New documents and agent folders created on disk, and sizes that change (gui.documents_watcher).
        self.documents_watcher = DocumentsWatcher(parent=self)
        self.actions_by_name: dict[str, QAction] = {}
        #: Find in all documents, quick open, the palette, Preferences… (helper "deskplus").
        self.desk = DeskTools(self)
        self._build_menus()
        self._connect_signals()
        self.setWindowTitle("memdesk")
        if project is not None:
            self.open_project(project)

    # -- menus ---------------------------------------------------------------------------------
    def _action(self, name: str, text: str, *keys: QKeySequence | str) -> QAction:
        action = QAction(text, self)
        sequences: list[QKeySequence] = []
        for key in keys:  # "Ctrl+Shift+Z" and StandardKey.Redo are one key on Linux: list it once
            sequence = QKeySequence(key)
            if not sequence.isEmpty() and sequence not in sequences:
                sequences.append(sequence)
        action.setShortcuts(sequences)
        self.addAction(action)
        self.actions_by_name[name] = action
        return action

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(self._action("open", "&Open project folder…", "Ctrl+O"))
        file_menu.addAction(self._action("quick_open", "&Quick open…", "Ctrl+P"))
        file_menu.addAction(self._action("new_document", "&New document…", "Ctrl+N"))
        self.recent_menu = file_menu.addMenu("Open &recent")
        file_menu.addAction(self._action("save", "&Save memory", "Ctrl+S"))
        file_menu.addAction(self._action("save_all", "Save a&ll", *SAVE_ALL_KEYS))
        file_menu.addAction(self._action("reload", "Re&load from disk", "F5"))
        file_menu.addSeparator()
        file_menu.addAction(self._action("reveal", "Reveal in file &manager", "Alt+Shift+R"))
        file_menu.addAction(self._action("copy_path", "Copy &path", "Alt+Shift+C"))
        file_menu.addAction(self._action("copy_relative_path", "Copy relative pat&h", "Ctrl+Alt+Shift+C"))
        file_menu.addSeparator()
        file_menu.addAction(self._action("quit", "&Quit", "Ctrl+Q"))
        edit_menu = self.menuBar().addMenu("&Edit")
        edit_menu.addAction(self._action("undo", "&Undo", "Ctrl+Z"))
        edit_menu.addAction(self._action("redo", "&Redo", "Ctrl+Shift+Z", QKeySequence.StandardKey.Redo))
        edit_menu.addSeparator()
        edit_menu.addAction(self._action("find", "&Find…", "Ctrl+F"))
        edit_menu.addAction(self._action("replace", "Find and &replace…", "Ctrl+H"))
        edit_menu.addAction(self._action("find_all", "Find in &all documents…", "Ctrl+Shift+F"))
        edit_menu.addAction(self._action("goto", "&Go to line…", "Ctrl+G"))
        edit_menu.addAction(self._action("next_section", "&Next section", "Ctrl+Down", "Alt+Down"))
        edit_menu.addAction(self._action("previous_section", "Pre&vious section", "Ctrl+Up", "Alt+Up"))
        edit_menu.addSeparator()
        edit_menu.addAction(self._action("preferences", "Pre&ferences…", "Ctrl+,"))
        self.actions_by_name["preferences"].setMenuRole(QAction.MenuRole.PreferencesRole)
        self.view_menu = self.menuBar().addMenu("&View")
        self.view_menu.addAction(self._action("palette", "&Command palette…", "Ctrl+Shift+P"))
        self.view_menu.addAction(self._action("preview", "Toggle &preview", "Ctrl+E"))
        self.view_menu.addAction(self._action("side", "Open &beside (another document, to read or edit)", "Ctrl+\\"))
        self.view_menu.addAction(self._action("next_document", "Ne&xt document tab", "Ctrl+PgDown"))
        self.view_menu.addAction(self._action("previous_document", "Previous document ta&b", "Ctrl+PgUp"))
        self.view_menu.addAction(self._action("close_document", "&Close document tab", "Ctrl+W"))
        self.view_menu.addAction(self._action("outline", "Toggle &outline", "Ctrl+Shift+O"))
        self.view_menu.addAction(self._action("notices", "Show &notices", "Ctrl+Shift+N"))
        theme_menu = self.view_menu.addMenu("&Theme")
        self.theme_group = QActionGroup(self)
        for mode in MODES:
            label = {"system": "Follow the &system", "light": "&Light", "dark": "&Dark"}[mode]
            action = self._action(f"theme:{mode}", label)
            action.setCheckable(True)
            action.setChecked(mode == self.theme.mode)
            self.theme_group.addAction(action)
            theme_menu.addAction(action)
        self.view_menu.addSeparator()
        insights_menu = self.menuBar().addMenu("&Insights")
        insights_menu.addAction(self._action("run_extraction", "Run &extraction…", "Ctrl+Shift+E"))
        tools_menu = self.menuBar().addMenu("&Tools")
        tools_menu.addAction(self._action("providers", "Model &providers…"))
        tools_menu.addAction(self._action("migrate", "&Migrate legacy memory.md…"))
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction(self._action("shortcuts", "&Keyboard shortcuts…", "F1", "Ctrl+/"))
        help_menu.addSeparator()
        from gui.widgets.about_dialog import (
            DOCS,  # titles only (it imports no core module that needs a project)
        )

        for index, (title, relpath) in enumerate(DOCS):
            action = self._action(f"doc:{index}", f"{title}…")
            action.triggered.connect(lambda _=False, r=relpath: self.desk.open_doc(r))
            help_menu.addAction(action)
        help_menu.addSeparator()
        help_menu.addAction(self._action("about", "&About memdesk…"))
        self.actions_by_name["about"].setMenuRole(QAction.MenuRole.AboutRole)

    def _rebuild_tab_actions(self) -> None:
        for name in [n for n in self.actions_by_name if n.startswith("tab:")]:
            action = self.actions_by_name.pop(name)
            self.view_menu.removeAction(action)
            self.removeAction(action)
        for index in range(self.tabs.count()):
            keys = [f"Ctrl+{index + 1}"] if index < 9 else []
            action = self._action(f"tab:{index}", f"Go to {self.tabs.tabText(index)}", *keys)
            action.triggered.connect(lambda _=False, i=index: self.tabs.setCurrentIndex(i))
            self.view_menu.addAction(action)

    def _rebuild_recent_menu(self) -> None:
        self.recent_menu.clear()
        for path in self.io.call(self.recent.paths, ""):  # each folder is checked: on the window's worker
            action = self.recent_menu.addAction(str(path))
            action.triggered.connect(lambda _=False, p=path: self.open_project(p))
        self.recent_menu.setEnabled(not self.recent_menu.isEmpty())

    # -- wiring --------------------------------------------------------------------------------
    def _connect_signals(self) -> None:
        a = self.actions_by_name
        a["open"].triggered.connect(self.choose_project)
        a["save"].triggered.connect(self.desk.save)  # the editor's document, or the one beside when typed in
        a["save_all"].triggered.connect(self.save_all)
        a["reload"].triggered.connect(self.reload)
        a["quit"].triggered.connect(self.close)
        a["undo"].triggered.connect(lambda: self.editor is not None and self.editor.text_edit.undo())
        a["redo"].triggered.connect(lambda: self.editor is not None and self.editor.text_edit.redo())
        a["find"].triggered.connect(self._on_find)
        a["replace"].triggered.connect(lambda: self._in_editor(lambda ed: ed.show_replace()))
        a["find_all"].triggered.connect(self.desk.show_find_all)
        a["quick_open"].triggered.connect(self.desk.show_quick_open)
        a["new_document"].triggered.connect(self.desk.new_document)
        a["preferences"].triggered.connect(self.desk.show_preferences)
        a["reveal"].triggered.connect(self.desk.reveal_current)
        a["copy_path"].triggered.connect(lambda: self.desk.copy_path())
        a["copy_relative_path"].triggered.connect(lambda: self.desk.copy_path(relative=True))
        a["about"].triggered.connect(self.desk.show_about)
        a["side"].triggered.connect(lambda: self.desk.toggle_side())
        a["next_document"].triggered.connect(lambda: self.desk.tabs is not None and self.desk.tabs.step(1))
        a["previous_document"].triggered.connect(lambda: self.desk.tabs is not None and self.desk.tabs.step(-1))
        a["close_document"].triggered.connect(lambda: self.desk.tabs is not None and self.desk.tabs.close_tab())
        a["palette"].triggered.connect(self.desk.show_palette)
        a["preview"].triggered.connect(lambda: self.editor is not None and self.editor.toggle_preview())
        a["goto"].triggered.connect(lambda: self._in_editor(lambda ed: ed.show_goto()))
        a["next_section"].triggered.connect(lambda: self._in_editor(lambda ed: ed.next_section()))
        a["previous_section"].triggered.connect(lambda: self._in_editor(lambda ed: ed.previous_section()))
        a["outline"].triggered.connect(lambda: self.editor is not None and self.editor.toggle_outline())
        a["notices"].triggered.connect(self.status.notifications.open_list)
        for mode in MODES:
            a[f"theme:{mode}"].triggered.connect(lambda _=False, m=mode: self.theme.set_mode(m))
        self.theme.changed.connect(lambda dark: self.editor is not None and self.editor.set_dark(dark))
        a["shortcuts"].triggered.connect(self.show_shortcuts)
        a["run_extraction"].triggered.connect(self.run_extraction)
        a["providers"].triggered.connect(lambda: self.dialogs().show_providers())
        a["migrate"].triggered.connect(self.migrate_legacy)
        self.recent_menu.aboutToShow.connect(self._rebuild_recent_menu)
        self.tabs.viewBuilt.connect(self._connect_view)
        self.watcher.changed.connect(lambda: self.editor is not None and self.editor.on_disk_changed())
        self.backend_watcher.changed.connect(self._on_backend_change)
        self.documents_watcher.changed.connect(self._show_documents)
        self.documents_watcher.changed.connect(lambda: self.session is not None and self.session.poke_outside_watch())

    def _connect_project(self, session: ProjectSession, editor: MemoryEditor) -> None:
        picker = self._ensure_picker()
        picker.documentChosen.connect(self.open_document)
        editor.documentDirtyChanged.connect(picker.set_dirty)
        session.documentsChanged.connect(self._show_documents)
        session.documentChanged.connect(self._on_document_changed)
        editor.dirtyChanged.connect(self.setWindowModified)
        editor.titleChanged.connect(lambda title: self.tabs.setTabText(self.tabs.indexOf(editor), title))
        editor.sizeChanged.connect(self.status.set_size)
        editor.statusMessage.connect(self.status.show_message)
        editor.noticed.connect(self.status.notifications.add)
        editor.saved.connect(lambda: session.memoryReplaced.emit("editor"))
        editor.text_edit.undoAvailable.connect(self.actions_by_name["undo"].setEnabled)
        editor.text_edit.redoAvailable.connect(self.actions_by_name["redo"].setEnabled)
        reserved = ("preview", "next_section", "previous_section", "goto", "replace", "next_document",
                    "previous_document", "close_document")
        editor.text_edit.reserve_shortcuts([k for n in reserved for k in self.actions_by_name[n].shortcuts()])
        session.statusMessage.connect(self.status.show_message)
        # A save, restore or backend switch under way on the project's worker says so (gui.serial_worker).
        session.worker.busyChanged.connect(lambda busy, what: busy and what and self.status.show_message(what))
        session.noticedOutside.connect(  # a program's rewrite is kept as a notice; an agent's append is not
            lambda n: n.rewritten and self.status.notifications.add(n.describe(), "info"))
        # Load budget (helper "budget"): the tracker feeds the meter; the meter's chooser saves the readers.
        editor.budget.budgetsChanged.connect(self.status.budget_meter.set_budgets)
        editor.budget.choiceChanged.connect(self.status.budget_meter.set_consumers)
        editor.budget.statusMessage.connect(self.status.show_message)
        self.status.budget_meter.consumersChosen.connect(editor.budget.choose_consumers)
        editor.budget.announce()
        session.settingsChanged.connect(self._show_project_state)
        session.settingsChanged.connect(self._watch_memory)
        session.backendChanged.connect(self._show_project_state)
        session.backendChanged.connect(self._watch_memory)
        session.watch_settings()  # settings changed elsewhere show within a second (issue 18)
        from gui.consolidation_timer import ConsolidationTimer  # Fusion's dream/auto-summarize schedules

        self._consolidation_timer = ConsolidationTimer(session, parent=self)

    def _connect_view(self, view: QWidget) -> None:
        if hasattr(view, "runExtractionRequested"):  # the insights and prune views
            view.runExtractionRequested.connect(self.run_extraction)
        if hasattr(view, "openAtLine"):  # search results
            view.openAtLine.connect(self.open_document)
        if hasattr(view, "openSourceRequested"):  # an insight's source entry
            view.openSourceRequested.connect(self.open_document)
        if hasattr(view, "reviewConsolidation"):  # History's Fusion backups: the staged restore is reviewed there
            view.reviewConsolidation.connect(lambda pid: self.show_view("consolidation").refresh(select=pid))

    # -- documents -----------------------------------------------------------------------------
    def _ensure_picker(self) -> DocumentPicker:
        if self.picker is None:
            from gui.widgets.document_picker import DocumentPicker

            self.picker = DocumentPicker(self)
            self.workspace.insertWidget(0, self.picker)
            self.workspace.setStretchFactor(0, 0)  # the list keeps its width; the editor takes the rest
            self.workspace.setStretchFactor(1, 1)
            width = max(self.width(), 800)
            side = max(240, min(360, width // 4))
            self.workspace.setSizes([side, width - side])
        return self.picker

    def open_document(self, relpath: str, line: int = 0) -> bool:
        """Show ``relpath`` in the editor (unsaved edits of the one shown are kept), at ``line`` if given."""
        if self.session is None or self.editor is None:
            return False
        self.tabs.setCurrentWidget(self.editor)
        self.editor.switch_document(relpath)
        if self.session.current_path != relpath:
            return False
        if line > 0:
            self.editor.goto_line(line)
        return True

    def _show_documents(self, *_args: object) -> None:
        if self.session is not None and self.picker is not None:
            docs = self.session.documents()
            self.picker.set_documents(docs, self.session.current_path)
            self.actions_by_name["migrate"].setEnabled(any(d.legacy for d in docs))

    def migrate_legacy(self) -> bool:
        """Show what moving the legacy ``.fusion/memory.md`` into MEMORY.md changes; apply it if confirmed."""
        if self.session is None:
            return False
        from core.project.migrate import apply_migration, plan_migration
        from gui.widgets.migrate_dialog import MigrateDialog

        project = self.session.project
        try:  # reads both documents: on the project's worker
            plan = self.session.worker.call(lambda: plan_migration(project), "Reading the legacy memory…")
        except Exception as exc:
            self.show_error(f"Cannot plan the migration: {exc}")
            return False
        if plan is None:
            self.show_error("Nothing to migrate: this project has no legacy .fusion/memory.md beside .fusion/memory/.")
            return False
        if plan.target in (self.editor.unsaved_documents() if self.editor else []):
            self.show_error(f"{plan.target} has unsaved edits; save them first, then migrate.")
            return False
        if not self.ask_migrate(MigrateDialog(plan, self)):
            return False
        try:
            session = self.session
            changes = session.worker.call(lambda: apply_migration(session.project, plan), f"Migrating into {plan.target}…")
        except Exception as exc:
            self.show_error(f"Not migrated — nothing was changed: {exc}")
            return False
        if self.session.current_path not in {d.path for d in self.session.documents()}:
            self.open_document(plan.target)
        self.session.apply(changes, "migrate")
        self.status.show_message(f"Moved {plan.moved} line(s) into {plan.target}; both old versions are in History")
        return True

    def ask_migrate(self, dialog: QWidget) -> bool:
        """Show the migration dialog; True when the operator chose Apply (tests replace this)."""
        return bool(dialog.exec())

    def _on_document_changed(self, relpath: str) -> None:
        if self.session is None:
            return
        if self.picker is not None:
            if relpath not in self.picker.paths():
                self._show_documents()
            self.picker.set_current(relpath)
        self._show_title()
        self._watch_memory()

    def _show_title(self) -> None:
        if self.session is not None:
            name = self.session.current_path.rsplit("/", 1)[-1]
            self.setWindowTitle(f"memdesk — {self.session.root.name} — {name}[*]")

    # -- projects ------------------------------------------------------------------------------
    def open_project(self, folder: str | Path) -> bool:
        """Open ``folder`` as the project (asking first about unsaved edits); False if not opened."""
        path = Path(folder).expanduser()
        if not self.io.call(path.is_dir, ""):
            self.show_error(f"{path} is not a folder; choose a project folder.")
            return False
        if not self.maybe_discard("opening another project"):
            return False
        from gui.editor.memory_editor import MemoryEditor
        from gui.session import ProjectSession, open_reason

        self.status.show_message(f"Opening {path.name}…")  # a backend behind the network may take a moment
        try:
            session = ProjectSession(path)
        except Exception as exc:
            # Shown once, in the dialog (or on stderr for --screenshot); a log.exception here printed it
            # again on the terminal with a traceback.
            log.debug("cannot open %s", path, exc_info=True)
            self.show_error(f"Cannot open {path}: {open_reason(exc)}")
            return False
        self._close_project()
        self.session = session
        self.editor = MemoryEditor(session)
        self.tabs.set_project(session, self.editor)
        self.tabs.setTabText(self.tabs.indexOf(self.editor), self.editor.title())
        self.pages.setCurrentWidget(self.workspace)
        self._rebuild_tab_actions()
        self._connect_project(session, self.editor)
        self.desk.attach_tabs()  # the open documents' tabs above the editor (helper "deskplus")
        self.dialogs().set_session(session)
        session.confirm_backend_switch = self._confirm_backend_switch
        try:  # proposals stored by `memdesk extract` or the schedule wait for review
            session.load_pending_proposal()
        except Exception:
            log.exception("cannot list the pending proposals of %s", path)
        self.actions_by_name["undo"].setEnabled(False)
        self.actions_by_name["redo"].setEnabled(False)
        self.setWindowModified(False)
        self._show_documents()
        self._show_title()
        self._show_project_state()
        self.status.set_size(self.editor.size_label.size)
        self._watch_memory()
        self.documents_watcher.watch(session.root)
        session.watch_outside_changes()  # every document another program changes keeps its version before
        self.io.call(lambda: self.recent.add(session.root), "")
        self.status.show_message(f"Opened {session.root.name}")
        self.status.setToolTip(str(session.root))
        return True

    def _close_project(self) -> None:
        if getattr(self, "_consolidation_timer", None) is not None:
            self._consolidation_timer.stop()
            self._consolidation_timer = None
        self.watcher.stop()
        self.backend_watcher.stop()
        self.documents_watcher.stop()  # its observer thread holds an inotify instance until stopped
        self.status.budget_meter.clear()  # load budget (helper "budget")
        if self.editor is not None:
            self.status.budget_meter.consumersChosen.disconnect(self.editor.budget.choose_consumers)
        if self.editor is not None:
            self.editor.shutdown()
        self.tabs.clear_project()
        self.desk.reset()
        if self._dialogs is not None:
            self._dialogs.set_session(None)
        # Dropped before it closes: what runs while the joins wait on its worker (a queued signal, a timer)
        # sees no project rather than a closing one.
        session, self.session, self.editor = self.session, None, None
        if session is not None:
            session.close()  # the joins run on its worker, the window painting and saying "Closing …"

    def dialogs(self) -> DialogHost:
        """The extraction and providers dialogs (built on first use: they import core)."""
        if self._dialogs is None:
            from gui.dialog_host import DialogHost

            self._dialogs = DialogHost(self)
        return self._dialogs

    def run_extraction(self) -> None:
        """Open the Run extraction dialog of the open project."""
        if self.session is None:
            self.show_error("Open a project first: an extraction runs on a project's memory.")
            return
        self.dialogs().show_extraction()

    def choose_project(self) -> None:
        """Ask for a project folder and open it."""
        start = str(self.session.root.parent) if self.session else ""
        folder = QFileDialog.getExistingDirectory(self, "Open project folder", start)
        if folder:
            self.open_project(folder)

    def maybe_discard(self, action: str = "closing", paths: list[str] | None = None) -> bool:
        """True when it is fine to drop the editor's documents: none unsaved, or every one saved or
        discarded as the operator answered (gui.widgets.unsaved_dialog lists them all)."""
        if self.editor is None:
            return True
        unsaved = self.editor.unsaved_documents() if paths is None else paths
        if not unsaved:
            return True
        self._asking = (action, unsaved)
        choice = self.confirm_discard()
        if choice == "save":
            from gui.editor.save_all import save_all

            if save_all(self.editor):
                return True
            self.tabs.setCurrentWidget(self.editor)  # the one not saved is shown, with its reason
            return False
        return choice == "discard"

    def _ask_discard(self) -> Choice:
        from gui.widgets.unsaved_dialog import UnsavedDialog

        action, paths = getattr(self, "_asking", ("closing", []))
        return UnsavedDialog(paths, action, self).ask()

    def _confirm_backend_switch(self) -> bool:
        """Before the backend changes: every unsaved document saved (to the old one) or discarded."""
        if not self.maybe_discard("switching the memory backend"):
            return False
        if self.editor is not None and self.editor.unsaved_documents():
            from gui.editor.save_all import discard_all

            discard_all(self.editor)
        return True

    def save_all(self) -> bool:
        """File ▸ Save all: save every document with unsaved edits (:mod:`gui.save_all`); True when all were."""
        if self.editor is None:
            return True
        from gui.save_all import save_all

        result = save_all(self.editor)
        self.status.show_message(result.message())
        return result.ok

    def reload(self) -> None:
        """Reload memory from disk (asking about unsaved edits) and refresh the current view."""
        if self.editor is not None and self.maybe_discard(
                "reloading", [self.editor.current_path] if self.editor.dirty else []):
            self.editor.load()
        self.tabs.refresh_current()

    # -- views ---------------------------------------------------------------------------------
    def add_view(self, title: str, view: QWidget | ViewFactory, key: str | None = None) -> None:
        """Add a tab (or replace the one with the same key): a widget as is, or a factory called
        with the session, again for each project opened."""
        if self.tabs.add_view(title, view, key):
            self._rebuild_tab_actions()

    def view_keys(self) -> list[str]:
        """The ``--view`` names of the tabs, in order."""
        return self.tabs.view_keys()

    def show_view(self, key: str, *, switch: bool = True) -> QWidget:
        """Return the view of tab ``key`` (built if needed), making it the current tab unless not ``switch``."""
        return self.tabs.show_view(key, switch=switch)

    def view(self, key: str) -> QWidget:
        """Return the view of tab ``key``, building it if needed, without switching to it."""
        return self.show_view(key, switch=False)

    def _on_find(self) -> None:
        self._in_editor(lambda ed: ed.show_find())

    def _in_editor(self, do: Callable[[MemoryEditor], object]) -> None:
        """Bring the editor tab forward and run ``do`` on it (an editing shortcut from anywhere)."""
        if self.editor is not None:
            self.tabs.setCurrentWidget(self.editor)
            do(self.editor)

    def show_shortcuts(self) -> QWidget:
        """Open Help ▸ Keyboard shortcuts (the list generated from the actions) and return it."""
        from gui.widgets.shortcuts_dialog import ShortcutsDialog

        dialog = ShortcutsDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def _show_project_state(self, *_args: object) -> None:
        if self.session is None:
            return
        backend = self.session.backend
        caps = [c for c in ("read", "write", "search", "insights", "transactions") if backend.has_capability(c)]
        self.status.set_backend(backend.name, backend.id, caps, backend.fallback_reason)
        self.status.set_memory_enabled(self.session.settings.memory_enabled)
        self.status.set_settings_store(self.session.settings_store)

    def _watch_memory(self, *_args: object) -> None:
        self.watcher.watch(self.session.memory_path if self.session else None)
        backend = self.session.backend if self.session else None
        if self.backend_watcher.active and backend is self._watched_backend:
            return  # a settings change with the same backend: keep the subscription
        self._watched_backend = backend
        if not self.backend_watcher.watch(backend) and self.backend_watcher.error and self.session is not None:
            self.status.show_message(self.backend_watcher.error)

    def _on_backend_change(self, relpath: str) -> None:
        """Another host committed ``relpath`` (``""``: anything): the editor takes it as any external change."""
        if self.session is None:
            return
        self.session.changed_elsewhere(relpath)
        if self.editor is not None and relpath in ("", self.session.current_path):
            self.editor.on_disk_changed()  # reload, merge an append into a dirty editor, or the conflict view

    # -- window events -------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        """Ask about unsaved edits, then stop watching and close the project."""
        if not self.maybe_discard("quitting"):
            event.ignore()
            return
        self._close_project()
        event.accept()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        """Accept a folder dragged onto the window."""
        if _dropped_folder(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        """Open a dropped folder as the project."""
        folder = _dropped_folder(event.mimeData())
        if folder is not None:
            event.acceptProposedAction()
            self.open_project(folder)


def default_size() -> tuple[int, int]:
    """The first window's size: 1200x720, less on a smaller screen, so that with its frame and the
    desktop's panels it fits a 1280x800 screen."""
    from PySide6.QtGui import QGuiApplication

    screen = QGuiApplication.primaryScreen()
    if screen is None:
        return DEFAULT_SIZE
    room = screen.availableGeometry()
    return min(DEFAULT_SIZE[0], room.width() - 64), min(DEFAULT_SIZE[1], room.height() - 64)


def _dropped_folder(mime: QMimeData) -> Path | None:
    folders = [Path(u.toLocalFile()) for u in mime.urls() if u.isLocalFile()] if mime.hasUrls() else []
    return next((f for f in folders if f.is_dir()), None)
