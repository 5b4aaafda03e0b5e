"""PyInstaller hook for python-docx: a new document starts from its template (docx/templates/default.docx and the
default styles), read at run time."""
from PyInstaller.utils.hooks import collect_data_files

datas = collect_data_files("docx")
