"""Subcommands of the CLI, one module each: add_arguments(parser) and run(args) -> int. Keep imports lazy."""
