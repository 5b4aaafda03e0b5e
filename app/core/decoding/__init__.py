"""Decoders: autoregressive, self-speculative (GravityOCR) and R-SWA (Unlimited-OCR); all speak app.core.record.events."""
