"""Per-architecture glue that transformers does not provide (processors, special rows)."""
