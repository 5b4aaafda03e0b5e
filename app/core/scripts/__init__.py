"""Recognisers for the scripts the bundled one cannot read, and the router that picks one per line.

The bundled recogniser (RapidOCR's PP-OCRv6, app.core.rapid) reads Latin and Chinese/Japanese. A line it
cannot read (most of its box left unread, letters of another script, low confidence) is handed to the router
(`router.py`), which finds the line's script by reading it with the Tesseract language models installed
(`tesseract.py`, in process through tesserocr) and keeps the reading whose confidence holds; the scripts,
their Tesseract languages and how each is installed are in `catalogue.py` (docs/scripts.md).

What must never live here: layout, the pipeline, assembly, Qt.
"""
