"""PyInstaller hook for PyMuPDF >= 2: PyMuPDF Layout lives in `pymupdf.layout` with its ONNX models under
layout/resources/. The MuPDF headers and link libraries (mupdf-devel/) are for building extensions, not running."""
from PyInstaller.utils.hooks import collect_data_files, collect_submodules, copy_metadata

datas = collect_data_files("pymupdf", excludes=["mupdf-devel/**", "**/*.h", "**/*.pyi", "**/py.typed"])
datas += copy_metadata("pymupdf")
for _dist in ("pymupdf_layout",):
    try:
        datas += copy_metadata(_dist)
    except Exception:  # an older PyMuPDF without the separate layout distribution
        pass
hiddenimports = collect_submodules("pymupdf.layout")
