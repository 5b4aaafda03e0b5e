from app import leave_quietly_on_interrupt

leave_quietly_on_interrupt()  # Ctrl+C while the command line is still being imported: no traceback

from app.cli import main  # noqa: E402

if __name__ == "__main__":  # guarded: spawn-based worker processes import this module
    raise SystemExit(main())
