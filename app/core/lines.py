"""Transitional alias of app.core.engines.line_finder (the built-in engine still imports it here); removed when it moves."""
from app.core.engines.line_finder import *  # noqa: F401,F403
from app.core.engines.line_finder import normalize_line, split_lines, to_grey  # noqa: F401
