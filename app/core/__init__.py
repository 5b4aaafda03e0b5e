"""The Qt-free engine: documents, layout, regions, models, decoding, assembly, traces. Never imports Qt."""
