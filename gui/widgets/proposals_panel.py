"""The stored proposal under review: which one (a picker when several wait), what it holds, and its
proposed insights, grouped by category, to accept or reject before the decisions are saved.

The operator works through the list by keyboard: arrows move, A accepts, R rejects, U undoes the
choice, Shift+A / Shift+R decide every insight shown in the current category, O (or Return) opens the
insight's source entry, / goes to the filter and Ctrl+Return merges. The panel does no I/O.
``runExtractionRequested`` and ``importRequested`` ask for a new proposal, ``proposalChosen(id)`` for
another stored one, ``sourceRequested(number)`` for an insight's source entry, and
``mergeRequested(accepted, rejected)`` hands over the numbers the operator accepted and rejected.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gui.models import STATUS_FILTERS, ProposalReviewModel, ReviewFilterModel, ReviewItem, category_title
from gui.widgets.review_list import ReviewList

NO_PROPOSAL = ("<b>No proposal under review.</b> Run an extraction (Ctrl+Shift+E) or import a saved reply; "
               "proposals stored by <code>memdesk extract</code> or the schedule show up here.")
#: The panel's keys, for the buttons, the tooltips and the Help menu's list.
SHORTCUTS = (("A", "Accept the selected insights"), ("R", "Reject the selected insights"),
             ("U", "Undo the choice (undecided again)"), ("Shift+A", "Accept every insight shown in the category"),
             ("Shift+R", "Reject every insight shown in the category"), ("O / Return", "Open the source entry"),
             ("/", "Filter the list"), ("Ctrl+Return", "Merge the accepted insights, save every decision"))


def merge_text(accepted: int, rejected: int) -> str:
    """The merge button's text for the choices made so far."""
    if accepted and rejected:
        return f"Merge {accepted}, reject {rejected}"
    if rejected:
        return f"Reject {rejected}"
    return f"Merge accepted ({accepted})" if accepted else "Merge accepted"


class ProposalsPanel(QWidget):
    """The proposal under review and its proposed insights, decided one by one or a category at a time."""

    runExtractionRequested = Signal()
    importRequested = Signal()
    proposalChosen = Signal(str)  # a stored proposal's id
    mergeRequested = Signal(list, list)  # numbers accepted, numbers rejected
    sourceRequested = Signal(int)  # the number of the insight whose source entry to open

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ProposalReviewModel(self)
        self.filter = ReviewFilterModel(self)
        self.filter.setSourceModel(self.model)
        self.title = QLabel("<b>Proposed insights</b>", self)
        self.run_button = QPushButton("Run extraction…", self)
        self.run_button.setToolTip("Ask a model provider for insights and a prune (Ctrl+Shift+E)")
        self.import_button = QPushButton("Import result…", self)
        self.import_button.setToolTip("Store a saved AI reply (JSON, or text holding the JSON) for review")
        self.picker_label = QLabel("Pending proposals:", self)
        self.picker = QComboBox(self)
        self.picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.picker.setMinimumContentsLength(12)
        self.origin = QLabel(self)
        self.origin.setWordWrap(True)
        self.origin.setTextFormat(Qt.TextFormat.RichText)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setPlaceholderText("Filter by text (/)")
        self.filter_edit.setClearButtonEnabled(True)
        self.status_filter = QComboBox(self)
        self.status_filter.addItems([s.capitalize() for s in STATUS_FILTERS])
        self.status_filter.setToolTip("Show the insights of one status only")
        self.hide_decided = QCheckBox("Hide decided", self)
        self.hide_decided.setToolTip("Show only the insights still waiting for a choice")
        self.list = ReviewList(self)
        self.list.setModel(self.filter)

        self.accept_action = self._action("Accept", "A", lambda: self.choose("accepted"))
        self.reject_action = self._action("Reject", "R", lambda: self.choose("rejected"))
        self.undecide_action = self._action("Undo choice", "U", lambda: self.choose(""))
        self.source_action = self._action("Open source", ("O", "Return", "Enter"), self.open_source)
        self.accept_category_action = self._action("Accept the shown in category", "Shift+A",
                                                   lambda: self.choose_category("accepted"))
        self.reject_category_action = self._action("Reject the shown in category", "Shift+R",
                                                   lambda: self.choose_category("rejected"))
        self._action("Filter", "/", self._focus_filter)
        self.merge_action = self._action("Merge", "Ctrl+Return", self._merge, self,
                                         Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.accept_button = self._button("Accept (A)", self.accept_action)
        self.reject_button = self._button("Reject (R)", self.reject_action)
        self.undecide_button = self._button("Undo (U)", self.undecide_action)
        self.source_button = self._button("Source (O)", self.source_action)
        self.category_button = QToolButton(self)
        self.category_button.setText("Category")
        self.category_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.category_menu = QMenu(self.category_button)
        self.category_menu.addAction(self.accept_category_action)
        self.category_menu.addAction(self.reject_category_action)
        self.category_button.setMenu(self.category_menu)
        self.accept_new_button = QPushButton("Accept all new", self)
        self.accept_new_button.setToolTip("Accept every undecided insight the insights file does not hold yet")
        self.merge_button = QPushButton("Merge accepted", self)
        self.merge_button.setDefault(True)
        self.merge_button.setToolTip("Merge the accepted insights into .fusion/memory-insights.md and save "
                                     "every decision in the proposal (Ctrl+Return)")
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self._layout()
        self._connect()
        self.set_choices([], None)
        self.set_proposal_text("", "")

    def _action(self, text: str, keys: str | tuple[str, ...], slot: Callable[[], object],
                widget: QWidget | None = None,
                context: Qt.ShortcutContext = Qt.ShortcutContext.WidgetShortcut) -> QAction:
        # On the list only (WidgetShortcut): typing "a" in the filter must not accept anything.
        owner = widget or self.list
        action = QAction(text, owner)
        action.setShortcuts([QKeySequence(k) for k in ((keys,) if isinstance(keys, str) else keys)])
        action.setShortcutContext(context)
        action.triggered.connect(slot)
        owner.addAction(action)
        return action

    def _button(self, text: str, action: QAction) -> QPushButton:
        button = QPushButton(text, self)
        button.setToolTip(f"{action.text()} ({action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)})")
        button.clicked.connect(action.trigger)
        return button

    def _layout(self) -> None:
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.run_button)
        top.addWidget(self.import_button)
        picker_row = QHBoxLayout()
        picker_row.addWidget(self.picker_label)
        picker_row.addWidget(self.picker, 1)
        filters = QHBoxLayout()
        filters.addWidget(self.filter_edit, 1)
        filters.addWidget(self.status_filter)
        filters.addWidget(self.hide_decided)
        decide = QHBoxLayout()
        for button in (self.accept_button, self.reject_button, self.undecide_button, self.source_button):
            decide.addWidget(button)
        decide.addStretch(1)
        save = QHBoxLayout()
        save.addWidget(self.category_button)
        save.addWidget(self.accept_new_button)
        save.addStretch(1)
        save.addWidget(self.merge_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for part in (top, picker_row):
            layout.addLayout(part)
        layout.addWidget(self.origin)
        layout.addWidget(self.summary)
        layout.addLayout(filters)
        layout.addWidget(self.list, 1)
        layout.addLayout(decide)
        layout.addLayout(save)
        layout.addWidget(self.status)

    def _connect(self) -> None:
        self.run_button.clicked.connect(self.runExtractionRequested)
        self.import_button.clicked.connect(self.importRequested)
        self.picker.activated.connect(self._on_picked)
        self.accept_new_button.clicked.connect(self.accept_all_new)
        self.merge_button.clicked.connect(self._merge)
        self.filter_edit.textChanged.connect(lambda text: self._refilter(text=text))
        self.filter_edit.returnPressed.connect(lambda: self.list.setFocus(Qt.FocusReason.ShortcutFocusReason))
        self.status_filter.currentIndexChanged.connect(lambda i: self._refilter(status=STATUS_FILTERS[i]))
        self.hide_decided.toggled.connect(lambda on: self._refilter(hide_decided=on))
        self.list.doubleClicked.connect(lambda index: index.parent().isValid() and self.open_source())
        self.list.delegate.sourceClicked.connect(self._on_source_clicked)
        self.model.dataChanged.connect(lambda *_: self._update_buttons())
        self.model.modelReset.connect(self._update_buttons)
        self.filter.layoutChanged.connect(self._update_buttons)
        self.filter.rowsRemoved.connect(lambda *_: self._update_buttons())
        self.filter.rowsInserted.connect(lambda *_: (self.list.expandAll(), self._update_buttons()))
        self.list.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        self.list.selectionModel().currentChanged.connect(lambda *_: self._update_buttons())

    # -- setters -------------------------------------------------------------------------------------
    def set_choices(self, choices: list[tuple[str, str]], current: str | None) -> None:
        """List the stored proposals (``(id, label)``) to pick from; shown only when there are several."""
        self.picker.blockSignals(True)
        self.picker.clear()
        for proposal_id, label in choices:
            self.picker.addItem(label, proposal_id)
        self.picker.setCurrentIndex(max(0, self.picker.findData(current)) if choices else -1)
        self.picker.blockSignals(False)
        for widget in (self.picker_label, self.picker):
            widget.setVisible(len(choices) > 1)
        self.picker_label.setText(f"{len(choices)} proposals:")

    def set_proposal_text(self, origin_html: str, summary: str) -> None:
        """Say which proposal is under review (``origin_html``; empty: none) and the reply's ``summary``."""
        self.origin.setText(origin_html or NO_PROPOSAL)
        self.summary.setText(f"<i>“{summary}”</i>" if summary else "")
        self.summary.setVisible(bool(summary))

    def set_items(self, items: list[ReviewItem]) -> None:
        """Show the proposed insights (the current one stays current when it is still listed)."""
        current = self.current_row()
        number = self.model.rows[current].number if current is not None else None
        self.model.set_rows(items)
        self.list.expandAll()
        row = next((r for r, item in enumerate(items) if item.number == number), None)
        if row is not None:
            self._make_current(row, focus=False)
        self._update_buttons()

    def set_row_choice(self, row: int, choice: str) -> None:
        """Choose ``accepted``, ``rejected`` or ``""`` for flat row ``row`` (as its keys do)."""
        self.model.set_choice(row, choice)

    def select_row(self, row: int) -> None:
        """Make flat row ``row`` the current one and give the list the focus (as a click would)."""
        self._make_current(row, focus=True)

    # -- where we are ----------------------------------------------------------------------------------
    def _proxy_index(self, row: int) -> QModelIndex:
        return self.filter.mapFromSource(self.model.item_index(row))

    def _make_current(self, row: int, *, focus: bool) -> None:
        index = self._proxy_index(row)
        if not index.isValid():
            return
        self.list.setCurrentIndex(index)
        self.list.scrollTo(index, QAbstractItemView.ScrollHint.EnsureVisible)
        if focus:
            self.list.setFocus(Qt.FocusReason.OtherFocusReason)

    def current_row(self) -> int | None:
        """The flat row of the current insight (``None`` on a category row or nothing)."""
        return self.model.flat_row(self.filter.mapToSource(self.list.currentIndex()))

    def visible_rows(self) -> list[int]:
        """The flat rows shown, top to bottom."""
        rows = []
        for group in range(self.filter.rowCount()):
            parent = self.filter.index(group, 0)
            for child in range(self.filter.rowCount(parent)):
                row = self.model.flat_row(self.filter.mapToSource(self.filter.index(child, 0, parent)))
                if row is not None:
                    rows.append(row)
        return rows

    def selected_rows(self) -> list[int]:
        """The flat rows selected (the current one when none is)."""
        rows = [self.model.flat_row(self.filter.mapToSource(i)) for i in self.list.selectionModel().selectedRows()]
        chosen = sorted({r for r in rows if r is not None})
        current = self.current_row()
        return chosen or ([current] if current is not None else [])

    def current_category(self) -> str | None:
        """The category of the current row (an insight's or a category row's)."""
        index = self.list.currentIndex()
        return index.data(ProposalReviewModel.CategoryRole) if index.isValid() else None

    # -- choices -------------------------------------------------------------------------------------
    def choose(self, choice: str) -> None:
        """Choose ``choice`` for the selected insights, then move on to the next undecided one."""
        rows = self.selected_rows()
        if not rows:
            return
        order = self.visible_rows()
        after = [r for r in order[order.index(rows[-1]) + 1:]] if rows[-1] in order else []
        for row in rows:
            self.model.set_choice(row, choice)
        if choice:
            self._move_on(after, rows[-1])

    def _move_on(self, after: list[int], last: int) -> None:
        shown = set(self.visible_rows())
        target = next((r for r in after if r in shown and self.model.rows[r].state == "pending"), None)
        if target is None:
            target = last if last in shown else next(iter(self.visible_rows()), None)
        if target is not None:
            self.list.selectionModel().clearSelection()
            self._make_current(target, focus=False)

    def choose_category(self, choice: str) -> int:
        """Accept (the new ones) or reject every undecided insight shown in the current category; return how many."""
        category = self.current_category()
        if category is None:
            return 0
        shown = set(self.visible_rows())
        rows = [r for r in self.model.category_rows(category) if r in shown and self.model.rows[r].state == "pending"
                and not (choice == "accepted" and self.model.rows[r].duplicate)]
        for row in rows:
            self.model.set_choice(row, choice)
        verb = "Accepted" if choice == "accepted" else "Rejected"
        self.status.setText(f"{verb} {len(rows)} in {category_title(category)}. " + self._progress())
        return len(rows)

    def accept_all_new(self) -> None:
        """Accept every undecided insight the file does not hold yet."""
        for row, item in enumerate(self.model.rows):
            if item.state == "pending" and not item.duplicate:
                self.model.set_choice(row, "accepted")

    def open_source(self) -> None:
        """Ask for the current insight's source entry."""
        row = self.current_row()
        if row is not None:
            self.sourceRequested.emit(self.model.rows[row].number)

    def _on_source_clicked(self, index: QModelIndex) -> None:
        row = self.model.flat_row(self.filter.mapToSource(index))
        if row is not None:
            self.sourceRequested.emit(self.model.rows[row].number)

    def _merge(self) -> None:
        accepted, rejected = self.model.chosen("accepted"), self.model.chosen("rejected")
        if accepted or rejected:
            self.mergeRequested.emit(accepted, rejected)

    def _focus_filter(self) -> None:
        self.filter_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter_edit.selectAll()

    def _refilter(self, **change: object) -> None:
        current, before = self.current_row(), self.visible_rows()
        self.filter.set_filter(**change)  # type: ignore[arg-type]
        self.list.expandAll()
        shown = self.visible_rows()
        if current is not None and shown:
            # The current row stays current; when the filter hides it, the next one shown takes its place.
            after = before[before.index(current):] if current in before else []
            target = next((r for r in after if r in set(shown)), shown[0])
            self._make_current(target, focus=False)
        self._update_buttons()

    def _on_picked(self, index: int) -> None:
        proposal_id = self.picker.itemData(index)
        if proposal_id:
            self.proposalChosen.emit(str(proposal_id))

    # -- state ---------------------------------------------------------------------------------------
    def _progress(self) -> str:
        items = self.model.rows
        decided = sum(i.state != "pending" for i in items)
        unsaved = len(self.model.chosen("accepted")) + len(self.model.chosen("rejected"))
        shown = len(self.visible_rows())
        text = f"{decided} of {len(items)} decided" + (f" · {unsaved} not saved yet" if unsaved else " · all saved")
        return text + (f" · {shown} shown" if shown != len(items) else "")

    def _update_buttons(self) -> None:
        items = self.model.rows
        rows = self.selected_rows()
        open_rows = [r for r in rows if items[r].state != "merged"]
        self.accept_action.setEnabled(bool(open_rows))
        self.reject_action.setEnabled(bool(open_rows))
        self.undecide_action.setEnabled(any(items[r].unsaved for r in rows))
        current = self.current_row()
        self.source_action.setEnabled(current is not None and items[current].source_line is not None)
        category = self.current_category()
        name = category_title(category) if category else "category"
        self.accept_category_action.setText(f"Accept the new shown in {name}\tShift+A")
        self.reject_category_action.setText(f"Reject the undecided shown in {name}\tShift+R")
        self.category_button.setText(f"{name} ▾" if category else "Category ▾")
        self.category_button.setEnabled(category is not None)
        self.category_button.setToolTip(f"Decide every insight shown in {name} at once (Shift+A, Shift+R)")
        for button, action in ((self.accept_button, self.accept_action), (self.reject_button, self.reject_action),
                               (self.undecide_button, self.undecide_action), (self.source_button, self.source_action)):
            button.setEnabled(action.isEnabled())
        self.accept_new_button.setEnabled(any(i.state == "pending" and not i.duplicate for i in items))
        accepted, rejected = len(self.model.chosen("accepted")), len(self.model.chosen("rejected"))
        self.merge_button.setEnabled(bool(accepted or rejected))
        self.merge_action.setEnabled(bool(accepted or rejected))
        self.merge_button.setText(merge_text(accepted, rejected))
        self.status.setText(self._progress() if items else "")
