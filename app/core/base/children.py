"""Child processes that end with the process that started them (the app, a test run), even when it is killed or
crashes and cleans nothing up: on Linux the child asks the kernel for SIGKILL when its parent dies
(PR_SET_PDEATHSIG). Elsewhere nothing is set and the parent's own clean-up is all there is.

What must never live here: starting a particular server, what the child runs."""
from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent():
    """A `preexec_fn` for subprocess.Popen that sets PR_SET_PDEATHSIG = SIGKILL (Linux), or None elsewhere. prctl
    is looked up here, before the fork, so the child only makes the one call. (The signal comes when the thread
    that started the child ends: start it from one that lives as long as the child should.)"""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def child() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the call: nobody would send the signal
            os._exit(1)

    return child
