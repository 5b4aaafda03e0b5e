"""PyInstaller hook for pymupdf4llm: its OCR-decision ONNX model is a data file, and its OCR plug-ins
(rapidocr back-ends) are chosen at run time. The llama-index reader is left out (needs llama_index)."""
from PyInstaller.utils.hooks import collect_data_files, collect_submodules, copy_metadata

datas = collect_data_files("pymupdf4llm", excludes=["**/README.md"]) + copy_metadata("pymupdf4llm")
hiddenimports = collect_submodules("pymupdf4llm", filter=lambda name: not name.startswith("pymupdf4llm.llama"))
excludedimports = ["llama_index"]
