"""Scriptorium. The version is the installed package's (pyproject.toml), never a second copy kept here."""
import sys as _sys


def quiet_exit(signum=None, frame=None) -> None:  # noqa: ARG001 - also a signal handler
    """Leave at once with exit code 130 and one word: for an interrupt at a moment when nothing is being written
    (imports, loading a model), where a KeyboardInterrupt would only surface as a traceback from inside an import."""
    import os
    import sys

    try:
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
    finally:
        os._exit(130)


def leave_quietly_on_interrupt() -> None:
    """Until a command takes Ctrl+C over (app.cli.main), an interrupt ends the process through `quiet_exit`."""
    import signal

    try:
        signal.signal(signal.SIGINT, quiet_exit)
    except ValueError:  # not the main thread (an embedding program): leave its handling alone
        pass


def _run_as_the_program() -> bool:
    """`python [options] -m app …`, and Python is still finding app.__main__ (argv[0] is "-m" until then)."""
    argv = list(getattr(_sys, "orig_argv", []))
    return _sys.argv[:1] == ["-m"] and "-m" in argv and argv[argv.index("-m") + 1:][:1] == ["app"]


if _run_as_the_program():  # Ctrl+C is quiet from this package's first lines, not only from app.__main__'s
    leave_quietly_on_interrupt()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scriptorium")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"


__version__ = _version()
