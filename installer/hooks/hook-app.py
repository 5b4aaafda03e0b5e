"""PyInstaller hook for Scriptorium's own package `app`.

The CLI imports its subcommands by name (`app.commands.<name>`) and the engine registry names factories as
"module:function" strings, so static analysis cannot see them: collect every submodule.
"""
from PyInstaller.utils.hooks import collect_submodules

hiddenimports = collect_submodules("app")
