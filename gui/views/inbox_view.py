"""The Inbox: writes the memory firewall held for review, one at a time, by keyboard as the insights review.

The list shows each pending item (document, writer, rules); the pane beside it shows the held text
with every flagged span highlighted, a secret masked as ``[REDACTED:rule]`` until revealed (V), the
writer, the target document and each rule with its message. A accepts, D accepts with the secrets
redacted, E edits the text in place and Ctrl+Return accepts the edit, M merges into the
near-duplicate, S supersedes the contradicted entry, R rejects; Up/Down move. Every action goes
through :mod:`core.firewall.review` (the write pipeline again) and a refusal is shown in the banner.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QSplitter,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from core.firewall import review
from core.firewall.inbox import Inbox, InboxError, Item
from core.firewall.policy import Policy, PolicyError, load_policy, set_rule
from core.project import Changes
from core.storage.userdirs import user_config_dir
from gui.session import ProjectSession
from gui.widgets.banner import Banner
from gui.widgets.firewall_policy import FirewallPolicyTable
from gui.widgets.parts import view_action

KIND_COLOURS = {"secret": "#f4b6b6", "injection": "#f7d58c", "near-duplicate": "#b9d7f5", "contradiction": "#d9c2f0"}
SHORTCUTS = (("A", "Accept as held"), ("D", "Accept with secrets redacted"), ("E", "Edit the text"),
             ("Ctrl+Return", "Accept the edited text"), ("M", "Merge into the near-duplicate"),
             ("S", "Supersede the contradicted entry"), ("R", "Reject"), ("V", "Reveal or mask secrets"))
EMPTY = "<b>The inbox is empty.</b> Writes the memory firewall holds for review appear here."


class InboxView(QWidget):
    """Held writes on the left, the selected one's text, flags and writer on the right."""

    itemResolved = Signal(str, str)  # inbox id, what was done

    def __init__(self, session: ProjectSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        root = session.root  # the first use makes the user's sealing key: on the project's worker
        self.inbox = session.worker.call(lambda: Inbox(root, user_config_dir()), "")
        self.items: list[Item] = []
        self.revealed = False
        self.editing = False
        self.banner = Banner(self)
        self.list = QListWidget(self)
        self.list.setObjectName("inboxList")
        self.list.setSpacing(4)
        self.list.setWordWrap(True)
        self.header = QLabel(self)
        self.header.setObjectName("inboxHeader")
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("inboxText")
        self.text.setReadOnly(True)
        self.keys = QLabel("   ".join(f"<b>{k}</b> {what}" for k, what in SHORTCUTS), self)
        self.keys.setWordWrap(True)
        right = QWidget(self)
        box = QVBoxLayout(right)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.header)
        box.addWidget(self.text, 1)
        box.addWidget(self.keys)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self.list)
        splitter.addWidget(right)
        splitter.setSizes([380, 820])
        self.policy_label = QLabel("<b>Policy</b> for this project (kept in .fusion/memdesk/, never in Fusion's "
                                   "settings): what each writer's findings do", self)
        self.policy_label.setWordWrap(True)
        self.policy = FirewallPolicyTable(self)
        self.policy.setMaximumHeight(240)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.policy_label)
        layout.addWidget(self.policy)
        self.policy.changeRequested.connect(self.set_policy)
        for text, keys, slot in (
            ("Accept", "A", lambda: self.act("accept")), ("Accept redacted", "D", lambda: self.act("redact")),
            ("Edit", "E", self.start_edit), ("Accept edited", "Ctrl+Return", lambda: self.act("edit")),
            ("Merge into the near-duplicate", "M", lambda: self.act("merge")),
            ("Supersede the contradicted entry", "S", lambda: self.act("supersede")),
            ("Reject", "R", lambda: self.act("reject")), ("Reveal or mask secrets", "V", self.toggle_reveal),
        ):
            view_action(self, text, keys, slot)
        self.list.currentRowChanged.connect(lambda _row: self.show_current())
        session.documentsChanged.connect(self.refresh)
        self.refresh()
        self.show_policy()

    def show_policy(self) -> None:
        """Show the project's policy (a bad policy file is named in the banner)."""
        try:
            root = self.session.root  # memdesk's own state file: read on the project's worker
            self.policy.set_policy(self.session.worker.call(lambda: load_policy(root), ""))
        except PolicyError as exc:
            self.banner.show_message(str(exc))

    def set_policy(self, writer: str, rule: str, action: str) -> None:
        """Save one writer's action for one rule family (an action it would get anyway removes the override)."""
        try:
            root = self.session.root

            def save() -> None:  # on the project's worker: the policy file is rewritten
                current = load_policy(root)
                rest = {w: {r: a for r, a in t.items() if (w, r) != (writer, rule)} for w, t in current.rules.items()}
                inherited = Policy(rest).action(writer, None, rule, rule)
                set_rule(root, writer, rule, None if action == inherited else action)

            self.session.worker.call(save, "Saving the firewall policy…")
        except (PolicyError, OSError, ValueError) as exc:
            self.banner.show_message(f"The policy was not changed: {exc}")
        self.show_policy()

    def current(self) -> Item | None:
        """The item selected in the list."""
        row = self.list.currentRow()
        return self.items[row] if 0 <= row < len(self.items) else None

    def refresh(self) -> None:
        """Read the inbox again (a damaged or tampered one is named in the banner, nothing applied)."""
        keep = self.current().id if self.current() else None
        try:
            self.items = self.session.worker.call(self.inbox.items, "")  # the inbox file: read on the worker
        except InboxError as exc:
            self.items = []
            self.banner.show_message(str(exc))
        self.list.blockSignals(True)
        self.list.clear()
        for item in self.items:
            s = item.summary()
            rules = ", ".join(sorted({f["rule"] for f in s["flags"]}))
            who = s["writer"].get("name") or s["writer"].get("kind")
            QListWidgetItem(f"{s['path']}\n{who} · {rules}", self.list)
        self.list.blockSignals(False)
        ids = [i.id for i in self.items]
        self.list.setCurrentRow(ids.index(keep) if keep in ids else (0 if ids else -1))
        self.show_current()

    def show_current(self) -> None:
        """Show the selected item: header, text with its spans highlighted (masked unless revealed)."""
        self.editing = False
        self.text.setReadOnly(True)
        item = self.current()
        if item is None:
            self.header.setText(EMPTY)
            self.text.setPlainText("")
            return
        s = item.summary()
        who = s["writer"].get("kind") + (f":{s['writer']['name']}" if s["writer"].get("name") else "")
        rules = "".join(f"<br>• <b>{f['kind']}</b> {f['rule']} (line {f['line']}): {_escape(f.get('message', ''))}"
                        for f in s["flags"])
        masked = item.sealed and not self.revealed
        self.header.setText(f"<b>{_escape(s['path'])}</b> — {s['op']} by <b>{_escape(who)}</b> via {s['source']}, "
                            f"{s['created']}{' — secrets masked (V reveals)' if masked else ''}{rules}")
        if masked:  # shown from the stored redacted copy: a sealed item is opened only when revealed
            shown, spans = review.display("", s["flags"], masked=item.data.get("redacted") or "")
        else:
            try:
                body = self.session.worker.call(lambda: self.inbox.text_of(item), "")
            except InboxError as exc:
                self.banner.show_message(str(exc))
                body = ""
            shown, spans = review.display(body, s["flags"], reveal=True)
        self.text.setPlainText(shown)
        self._highlight(spans)

    def _highlight(self, spans: list[tuple[int, int, str]]) -> None:
        selections = []
        for start, end, kind in spans:
            cursor = QTextCursor(self.text.document())
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(KIND_COLOURS.get(kind, "#dddddd")))
            sel = QTextEdit.ExtraSelection()
            sel.cursor, sel.format = cursor, fmt
            selections.append(sel)
        self.text.setExtraSelections(selections)

    def toggle_reveal(self) -> None:
        """Show held secrets in clear, or mask them again."""
        self.revealed = not self.revealed
        self.show_current()

    def start_edit(self) -> None:
        """Make the held text editable; Ctrl+Return accepts what it then says."""
        if self.current() is None:
            return
        if self.current().sealed and not self.revealed:
            self.revealed = True
            self.show_current()
        self.editing = True
        self.text.setReadOnly(False)
        self.text.setFocus()

    def act(self, action: str) -> None:
        """Accept (as held, redacted or edited), merge, supersede or reject the selected item."""
        item = self.current()
        if item is None or (action == "edit" and not self.editing):
            return
        project, inbox = self.session.project, self.inbox
        edited = self.text.toPlainText() if action == "edit" else None

        def resolve() -> None:  # on the project's worker: the write goes through the pipeline, the inbox is rewritten
            if action == "reject":
                review.reject(inbox, item.id)
            elif action == "merge":
                review.merge(project, inbox, item.id)
            elif action == "supersede":
                review.supersede(project, inbox, item.id)
            else:
                review.accept(project, inbox, item.id, redacted=action == "redact", edited=edited)

        try:
            self.session.worker.call(resolve, f"Inbox item {item.id}: {action}…")
        except Exception as exc:  # a refusal, a conflict, a tampered inbox: said, nothing changed
            self.banner.show_message(f"Inbox item {item.id}: {exc}")
            return
        self.banner.clear()
        if action != "reject":
            self.session.apply(Changes(documents=frozenset({str(item.data["path"])})), "inbox-accept")
        self.itemResolved.emit(item.id, action)
        self.refresh()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
