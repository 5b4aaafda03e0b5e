"""PyInstaller hook for latex2mathml: its symbol table (unimathsymbols.txt) is read at import time."""
from PyInstaller.utils.hooks import collect_data_files

datas = collect_data_files("latex2mathml")
