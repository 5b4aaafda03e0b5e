"""Where the text goes next: the document as Word (DOCX), Excel (XLSX, its tables), ALTO XML, hOCR and Docling
JSON, each built from one plain description of the export (`app.core.formats.model.ExportDocument`: pages, blocks
with their Markdown and plain lines, and the one geometry model of lines and words in `geometry`). A leaf package:
it knows regions and text, never the pipeline that made them (app.core.pipeline.output builds the description and
writes the files as one set).

What must never live here: decoding, layout, choosing or writing files, Qt.
"""
