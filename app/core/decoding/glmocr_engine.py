"""Transitional alias of app.core.engines.glmocr (the built-in engine still imports it here); removed when it moves."""
from app.core.engines.glmocr import *  # noqa: F401,F403
from app.core.engines.glmocr import GlmOcrEngine, open_ar, open_selfspec  # noqa: F401
