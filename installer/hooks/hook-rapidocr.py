"""PyInstaller hook for rapidocr: its PP-OCR ONNX models and YAML configs are data files, and it imports its
inference back-end by name. Only the onnxruntime back-end ships; the paddle/openvino/mnn/tensorrt/pytorch
back-ends need packages the bundle does not carry."""
from PyInstaller.utils.hooks import collect_data_files, collect_submodules, copy_metadata

_UNUSED_ENGINES = ("paddle", "openvino", "mnn", "tensorrt", "pytorch")

datas = collect_data_files("rapidocr", excludes=["**/*.pyi", "**/py.typed"]) + copy_metadata("rapidocr")
hiddenimports = collect_submodules(
    "rapidocr",
    filter=lambda name: not any(name.startswith(f"rapidocr.inference_engine.{e}") for e in _UNUSED_ENGINES),
)
excludedimports = ["paddle", "openvino", "MNN", "tensorrt"]
