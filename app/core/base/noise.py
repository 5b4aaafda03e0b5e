"""Third-party noise on stderr: numpy's RuntimeWarnings (an empty crop's mean), RapidOCR's log lines ("The text
detection result is empty" for every blank region), onnxruntime's. `convert` and the layout process hide them
unless asked (`-v`): a person's terminal shows our messages, which say what happened and what to do.

What must never live here: our own warnings (they travel as ErrorRaised events and are always shown).
"""
from __future__ import annotations

import logging
import warnings

THIRD_PARTY_LOGGERS = ("RapidOCR", "rapidocr", "onnxruntime", "pymupdf4llm", "pymupdf")


class _Below(logging.Filter):
    """Drops records under `level` (a filter survives the library resetting its logger's level)."""

    def __init__(self, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= self.level


_FILTER = _Below(logging.CRITICAL)


def quiet_third_party(verbose: bool = False) -> None:
    """Hide (or, with `verbose`, show again) the third-party warnings and log lines named above."""
    for name in THIRD_PARTY_LOGGERS:
        logger = logging.getLogger(name)
        if verbose:
            logger.removeFilter(_FILTER)
        elif _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
    if verbose:
        warnings.filterwarnings("default", category=RuntimeWarning)
        return
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    try:
        import onnxruntime

        onnxruntime.set_default_logger_severity(3)  # errors only
    except Exception:  # noqa: BLE001 - onnxruntime is a dependency; a broken install shows itself elsewhere
        pass
