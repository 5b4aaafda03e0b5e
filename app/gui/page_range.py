"""Choosing what to read: a "Pages" field over the thumbnails and a check box on each thumbnail. The field takes the
same page-range syntax as `convert --pages` (app.core.pipeline.options.parse_pages: "1-5,8", "3-", "all") and
refuses an invalid range with the same message `convert` prints ("report.pdf: page 9 does not exist (the document
has 2 pages)"), leaving the choice as it was; an unchecked thumbnail (Space on it, or Ctrl+K on the page) is a
skipped page. Read document (F5) then reads only the chosen pages, and the line under the field says how many
("Reads 3 of 12 pages"); the choice is kept with the work (journal).

What must never live here: running (the window's run_document does), parsing pages (core's parse_pages does).
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QListWidgetItem, QVBoxLayout, QWidget

from app.core.pipeline.options import parse_pages


def format_pages(indices: list[int], page_count: int) -> str:
    """0-based pages → the range syntax a person types ("1-3,7"); "all" for every page."""
    chosen = sorted(set(indices))
    if page_count and chosen == list(range(page_count)):
        return "all"
    parts, start = [], None
    for k, i in enumerate(chosen):
        if start is None:
            start = i
        if k + 1 == len(chosen) or chosen[k + 1] != i + 1:
            parts.append(f"{start + 1}" if start == i else f"{start + 1}-{i + 1}")
            start = None
    return ",".join(parts)


def refusal(name: str, spec: str, page_count: int) -> str:
    """Why `spec` is not a page range of the document ("" when it is): the words `convert --pages` uses."""
    try:
        parse_pages(spec, page_count)
    except ValueError as exc:
        return f"{name}: {exc}"
    return ""


def pages_count(work) -> str:
    """How many pages Read document will read: "Reads 3 of 12 pages" ("" without a document)."""
    if work is None or not work.page_count:
        return ""
    chosen = work.pages_to_read()
    n = work.page_count if chosen is None else len(chosen)
    total = work.page_count
    return f"Reads all {total} pages" if n == total and total > 1 else \
        f"Reads {n} of {total} page{'s' if total > 1 else ''}"


class PageRange(QObject):
    """The field and the thumbnails' check boxes of the current document."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.field = QLineEdit()
        self.field.setObjectName("page_range")
        self.field.setPlaceholderText("all (e.g. 1-5,8)")
        self.field.setClearButtonEnabled(True)
        self.field.setToolTip("The pages Read document (F5) reads, as for `convert --pages`: e.g. 1-5,8 or 3-; "
                              "uncheck a thumbnail (Space) to skip one page")
        self.field.returnPressed.connect(self.apply_field)
        self.field.editingFinished.connect(self.apply_field)
        self.count_label = QLabel()
        self.count_label.setObjectName("pages_count")
        self._quiet = False
        thumbs = window.thumbnails
        thumbs.itemChanged.connect(self._item_changed)
        thumbs.pages_set.connect(self.show_choice)

    def panel(self) -> QWidget:
        """The field, its label and the thumbnail strip, in one column."""
        box = QWidget()
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        label = QLabel("&Pages to read:")
        label.setBuddy(self.field)
        lay.addWidget(label)
        lay.addWidget(self.field)
        lay.addWidget(self.count_label)
        lay.addWidget(self.window.thumbnails, 1)
        return box

    # --- the choice ---------------------------------------------------------------------------------------------

    def pages_to_read(self, work=None) -> list[int] | None:
        """The chosen pages of `work` (default: the current document); None: all of them."""
        work = work or self.window.work
        return work.pages_to_read() if work is not None else None

    def set_range(self, spec: str) -> bool:
        """Choose the pages by range; an invalid one is refused (banner) and nothing changes. Returns success."""
        work = self.window.work
        if work is None or not work.page_count:
            return False
        spec = spec.strip()
        why = refusal(work.name, spec, work.page_count)
        if why:
            self.window.banner.show_message(why)
            self.field.setStyleSheet("QLineEdit { border: 1px solid #c62828; }")
            return False
        self.field.setStyleSheet("")
        chosen = set(parse_pages(spec or None, work.page_count))
        self._set_skipped(work, [i for i in range(work.page_count) if i not in chosen])
        return True

    def focus(self) -> None:
        self.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.field.selectAll()

    def apply_field(self) -> None:
        work = self.window.work
        if work is None or self.field.text().strip() == self._shown(work):
            return
        self.set_range(self.field.text())

    def toggle_page(self, page: int | None = None) -> None:
        """Skip the page (default: the one shown), or read it again when it was skipped."""
        work = self.window.work
        page = self.window.page_view.page if page is None else page
        if work is None or not 0 <= page < work.page_count:
            return
        skipped = set(work.skipped_pages) ^ {page}
        if len(skipped) == work.page_count:
            self.window.banner.show_message(f"{work.name}: at least one page must be read")
            return
        self._set_skipped(work, sorted(skipped))
        verb = "skipped" if page in skipped else "to be read"
        self.window.statusBar().showMessage(f"Page {page + 1} {verb}", 3000)

    def _set_skipped(self, work, skipped: list[int]) -> None:
        if sorted(skipped) != sorted(work.skipped_pages):
            work.skipped_pages = sorted(skipped)
            self.window.autosave.touch()
        self.show_choice()

    def _shown(self, work) -> str:
        chosen = work.pages_to_read()
        return "" if chosen is None else format_pages(chosen, work.page_count)

    def show_choice(self) -> None:
        """The field and the check boxes say the current document's choice."""
        work = self.window.work
        self.field.setEnabled(work is not None)
        self.field.setText(self._shown(work) if work is not None else "")
        self.count_label.setText(pages_count(work))
        thumbs = self.window.thumbnails
        skipped = set(work.skipped_pages) if work is not None else set()
        self._quiet = True
        for row in range(thumbs.count()):
            item = thumbs.item(row)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked if row in skipped else Qt.CheckState.Checked)
            item.setToolTip(f"Page {row + 1}: " + ("skipped (Space reads it)" if row in skipped else
                                                    "to be read (Space skips it)"))
        self._quiet = False

    def _item_changed(self, item: QListWidgetItem) -> None:
        work = self.window.work
        if self._quiet or work is None:
            return
        row = self.window.thumbnails.row(item)
        unchecked = item.checkState() == Qt.CheckState.Unchecked
        if unchecked != (row in work.skipped_pages):
            self.toggle_page(row)


def install_page_range(window, side_splitter) -> PageRange:
    """The field over the thumbnails, in the left column's splitter."""
    page_range = PageRange(window)
    index = side_splitter.indexOf(window.thumbnails)
    sizes = side_splitter.sizes()
    side_splitter.insertWidget(index, page_range.panel())  # the panel holds the strip now
    side_splitter.setSizes(sizes)
    return page_range
