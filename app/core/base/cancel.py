"""Cancelling work between two steps: a token any thread may set, checked by whoever does the work.

A leaf module: the decoders, the layout, the engines and the pipeline all check the same token, so it lives below
all of them.
"""
from __future__ import annotations

import threading


class Cancelled(Exception):
    """Raised by `CancelToken.check` when the token is set; engines turn it into a partial result."""


class CancelToken:
    """Set from any thread; checked by the worker between two forwards."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise Cancelled()
