"""PySide6 widgets and the worker thread. Depends on app.core, never the reverse."""
