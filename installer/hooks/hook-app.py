"""PyInstaller hook for Scriptorium's own package `app`.

The CLI imports its subcommands by name (`app.commands.<name>`) and the engine registry names factories as
"module:function" strings, so static analysis cannot see them: collect every submodule. Data files that ever land
inside the package (templates, tables) come along too; the app's own resources live in resources/ (the spec).
"""
from PyInstaller.utils.hooks import collect_data_files, collect_submodules

hiddenimports = collect_submodules("app")
datas = collect_data_files("app")
