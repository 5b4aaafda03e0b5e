"""Transitional alias of app.core.engines.lines (the built-in engine still imports it here); removed when it moves."""
from app.core.engines.lines import *  # noqa: F401,F403
from app.core.engines.lines import normalize_line, split_lines, to_grey  # noqa: F401
