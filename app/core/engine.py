"""Transitional alias of app.core.engines (the built-in engine still imports it here); removed when it moves."""
from app.core.engines import *  # noqa: F401,F403
from app.core.engines import CancelToken, Cancelled, EngineUnavailable, Emit, RegionResult, no_emit  # noqa: F401
