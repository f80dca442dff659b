"""Shows how big the memory is against the 1 MiB limit ("12.3 KiB of 1 MiB"), red when over.

``core.storage.fileio`` (the limit and the size format) is imported on first use: the status bar holds one
of these labels, and the window shell is shown before any ``core`` code is loaded.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget


def size_text(size: int) -> str:
    """Return ``12.3 KiB of 1 MiB`` for a size in bytes."""
    from core.storage.fileio import MAX_FILE_SIZE, format_size

    mib = 1024 * 1024
    limit = f"{MAX_FILE_SIZE // mib} MiB" if MAX_FILE_SIZE % mib == 0 else format_size(MAX_FILE_SIZE)
    return f"{format_size(size)} of {limit}"


class SizeLabel(QLabel):
    """A label with the size text; its ``over`` property (styled red) is set past the limit."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sizeLabel")
        self.size = 0
        self.setProperty("over", False)

    def set_size(self, size: int) -> None:
        """Show ``size`` bytes against the limit."""
        from core.storage.fileio import MAX_FILE_SIZE

        self.size = size
        over = size > MAX_FILE_SIZE
        self.setText(size_text(size) + (" — over the limit, saving is refused" if over else ""))
        self.setToolTip(f"{size:,} bytes of UTF-8; memory files are limited to {MAX_FILE_SIZE:,} bytes")
        if self.property("over") != over:
            self.setProperty("over", over)
            self.style().unpolish(self)
            self.style().polish(self)

    def is_over(self) -> bool:
        """Whether the size is past the limit."""
        from core.storage.fileio import MAX_FILE_SIZE

        return self.size > MAX_FILE_SIZE
