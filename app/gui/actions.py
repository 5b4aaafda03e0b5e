"""The window's actions, menus and toolbar, declared in one table: title, shortcut, icon and the window method
they call. The About box's shortcut list is generated from the same table."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QToolBar

from app.gui.theme import icon

# name: (menu, title, shortcut, icon, method of the window (dotted: of one of its parts), checkable)
ACTIONS = {
    "open": ("&File", "&Open…", "Ctrl+O", "open", "dialogs.ask_open", False),
    "open_trace": ("&File", "Open &trace…", "Ctrl+Shift+O", "trace", "dialogs.ask_open_trace", False),
    "open_session": ("&File", "Open se&ssion…", "", "", "sessions.ask_open", False),
    "save_session": ("&File", "&Save session", "Ctrl+S", "", "sessions.save", False),
    "save_session_as": ("&File", "Save session &as…", "Ctrl+Shift+S", "", "sessions.save_as", False),
    "export": ("&File", "&Export…", "Ctrl+E", "export", "dialogs.ask_export", False),
    "close_document": ("&File", "&Close document", "Ctrl+W", "", "close_current_document", False),
    "preferences": ("&File", "&Preferences…", "Ctrl+,", "settings", "dialogs.show_preferences", False),
    "quit": ("&File", "&Quit", "Ctrl+Q", "", "close", False),
    "run": ("&Run", "&Read document", "F5", "run", "run_document", False),
    "rerun_page": ("&Run", "Re-run OCR on this &page", "Shift+F5", "rerun", "rerun_page", False),
    "choose_pages": ("&Run", "Choose the pa&ges to read…", "Ctrl+Shift+P", "", "page_range.focus", False),
    "skip_page": ("&Run", "S&kip this page (or read it again)", "Ctrl+K", "", "page_range.toggle_page", False),
    "cancel": ("&Run", "&Cancel", "Esc", "cancel", "cancel_run", False),
    "record": ("&Run", "Record &trace of each run", "Ctrl+R", "record", "traces.set_recording", True),
    "zoom_in": ("&View", "Zoom &in", "Ctrl++", "zoom-in", "page_view.zoom_in", False),
    "zoom_out": ("&View", "Zoom &out", "Ctrl+-", "zoom-out", "page_view.zoom_out", False),
    "fit_width": ("&View", "Fit &width", "Ctrl+1", "fit-width", "page_view.fit_width", False),
    "fit_page": ("&View", "Fit &page", "Ctrl+2", "fit-page", "page_view.fit_page", False),
    "rotate_left": ("&View", "Rotate the page &left and read it again", "Ctrl+Shift+L", "rotate-left",
                    "turns.rotate_left", False),
    "rotate_right": ("&View", "Rotate the page ri&ght and read it again", "Ctrl+Shift+R", "rotate-right",
                     "turns.rotate_right", False),
    "previous_page": ("&View", "P&revious page", "Ctrl+PgUp", "previous", "previous_page", False),
    "next_page": ("&View", "&Next page", "Ctrl+PgDown", "next", "next_page", False),
    "toggle_preview": ("&View", "Show rendered p&review", "F8", "", "set_preview_visible", True),
    "raw_stream": ("&View", "Show the stream's raw &tags (Unlimited-OCR)", "", "", "flow.set_raw_stream", True),
    "undo": ("&Edit", "&Undo", "Ctrl+Z", "", "flow.undo", False),
    "redo": ("&Edit", "&Redo", "Ctrl+Shift+Z", "", "flow.redo", False),
    "find": ("&Edit", "&Find in the document…", "Ctrl+F", "", "find_bar.open", False),
    "read_again": ("&Review", "&Read the region again", "R", "", "flow.read_again", False),
    "draw_region": ("&Review", "&Draw a region", "D", "", "flow.set_draw_mode", True),
    "delete_region": ("&Review", "D&elete the region", "Delete", "", "flow.delete_region", False),
    "split_region": ("&Review", "&Split the region", "S", "", "flow.split_region", False),
    "merge_region": ("&Review", "&Merge with the next region", "M", "", "flow.merge_region", False),
    "order_mode": ("&Review", "Reading &order mode", "O", "order", "order.set_mode", True),
    "order_columns": ("&Review", "Order the page by &columns", "C", "", "order.by_columns", False),
    "order_top_down": ("&Review", "Order the page &top to bottom", "T", "", "order.top_to_bottom", False),
    "read_earlier": ("&Review", "Read the region one place &earlier", "[", "", "order.earlier", False),
    "read_later": ("&Review", "Read the region one place &later", "]", "", "order.later", False),
    "edit_table": ("&Review", "Edit the table as a &grid", "G", "", "tables.open_selected", False),
    "next_region": ("&Review", "Ne&xt region", "J", "", "flow.next_region", False),
    "previous_region": ("&Review", "Pre&vious region", "K", "", "flow.previous_region", False),
    "next_needs_review": ("&Review", "Next block &needing review", "N", "", "flow.next_needs_review", False),
    "mark_reviewed": ("&Review", "Mark &reviewed and go on", "Return", "", "flow.mark_reviewed", False),
    "user_guide": ("&Help", "&User guide", "F1", "", "dialogs.show_guide", False),
    "shortcuts": ("&Help", "&Keyboard shortcuts", "Ctrl+/", "", "dialogs.show_shortcuts", False),
    "about": ("&Help", "&About Scriptorium", "", "", "dialogs.show_about", False),
}
TOOLBAR = ["open", "run", "rerun_page", "cancel", None, "engine", None, "zoom_out", "zoom_in", "fit_width", "fit_page",
           "rotate_left", "rotate_right", "previous_page", "next_page", None, "order_mode", None, "record", "export"]


def build_actions(window: QMainWindow, engine_widget) -> SimpleNamespace:
    actions = {}
    menus: dict[str, QMenu] = {}
    for name, (menu, title, shortcut, icon_name, method, checkable) in ACTIONS.items():
        action = QAction(title, window)
        action.setObjectName(f"action_{name}")
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        if icon_name:
            action.setIcon(icon(icon_name))
        action.setCheckable(checkable)
        action.setToolTip(f"{title.replace('&', '').rstrip('…')} ({shortcut})" if shortcut else title)
        slot = window
        for part in method.split("."):  # "page_view.zoom_in": a method of one of the window's parts
            slot = getattr(slot, part)
        if checkable:
            action.toggled.connect(slot)
        else:
            action.triggered.connect(lambda _checked=False, s=slot: s())
        if menu not in menus:
            menus[menu] = window.menuBar().addMenu(menu)
        menus[menu].addAction(action)
        if name in ("save_session_as", "export", "close_document", "rerun_page", "cancel", "fit_page", "next_page", "merge_region",
                    "read_later", "next_needs_review"):
            menus[menu].addSeparator()
        actions[name] = action
    recent = QMenu("Open &recent", window)
    menus["&File"].insertMenu(actions["open_trace"], recent)
    toolbar = QToolBar("Main", window)
    toolbar.setObjectName("main_toolbar")
    toolbar.setMovable(False)
    for name in TOOLBAR:
        if name is None:
            toolbar.addSeparator()
        elif name == "engine":
            toolbar.addWidget(engine_widget)
        else:
            toolbar.addAction(actions[name])
    window.addToolBar(toolbar)
    return SimpleNamespace(recent_menu=recent, toolbar=toolbar, menus=menus, **actions)


# keys and gestures that are not menu actions (the About box lists them with the actions)
MORE_KEYS = [("Next / previous region", "Alt+Down / Alt+Up"), ("Find: next / previous hit", "F3 / Shift+F3"),
             ("Move or resize the selected region", "drag it or its handles"),
             ("Region menu: label, read as, split here, merge, delete", "right-click"),
             ("Type in the region's block", "double-click"),
             ("Skip a page, or read it again (thumbnail list)", "Space"),
             ("Edit a table region as a grid", "double-click it"),
             ("Table grid: merge / split cells", "Ctrl+M / Ctrl+Shift+M"),
             ("Table grid: add / remove a row", "Ctrl+Alt+Down / Ctrl+Alt+Up"),
             ("Table grid: add / remove a column", "Ctrl+Alt+Right / Ctrl+Alt+Left"),
             ("Table grid: continues on the next page", "Ctrl+J"),
             ("Reading order mode: set the order by clicking regions one after another", "click, click, …"),
             ("Reading order mode: read a region just before another", "drag its badge onto the other")]


def enable_actions(actions: SimpleNamespace, *, has_doc: bool, running: bool, exporting: bool) -> None:
    """What can be done now: most actions need a document; Export none being written; Cancel a live run."""
    for name in ("export", "close_document", "rerun_page", "zoom_in", "zoom_out", "fit_width", "fit_page",
                 "next_page", "previous_page", "run"):
        getattr(actions, name).setEnabled(has_doc)
    actions.export.setEnabled(has_doc and not exporting)
    actions.cancel.setEnabled(running)


def shortcut_table() -> list[tuple[str, str]]:
    from app.gui.views.decoding_views import PLAYBACK_KEYS

    table = [(t.replace("&", "").rstrip("…"), s) for (_m, t, s, _i, _f, _c) in ACTIONS.values() if s]
    playback = [(f"{title} (decoding views)", key) for key, (_what, title) in PLAYBACK_KEYS.items()]
    return table + MORE_KEYS + playback


def fill_recent_menu(menu: QMenu, paths: list[str], open_files) -> None:
    menu.clear()
    for path in paths:
        action = menu.addAction(Path(path).name)
        action.setToolTip(path)
        action.triggered.connect(lambda _c=False, p=path: open_files([p]))
    menu.setEnabled(bool(menu.actions()))
