"""`convert`'s exit codes (its module docstring says what each means), shared by the ways it reads its inputs
(one after another in process, or in worker processes: app.commands.convert_jobs).

What must never live here: anything but the numbers.
"""
EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_ENGINE, EXIT_WARNINGS, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
