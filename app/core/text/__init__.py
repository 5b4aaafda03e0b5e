"""Text as text: plausibility checks, edit distance and CER, the PDF text layer, and the structure a text layer
holds (tables as HTML, formulas as LaTeX).

What must never live here: models, OCR, anything that reads pixels.
"""
