"""Benchmarks: each module has `main(argv) -> int` and prints a table of ratios measured side by side in one run.
Run them with `python -m app bench NAME [--quick]`."""
