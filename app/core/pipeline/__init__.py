"""The page pipeline (docs/architecture.md, The page pipeline) as a package: options (`options`), the run and re-runs
(`run`), whole-document engines inside a run (`document_engine`), the output and the ONE Markdown/JSON writer
(`output`), Markdown rules (`assembly`) and the picture store (`pictures`).

What must never live here: Qt, model code (app.core.engines), review state (app.core.review).
"""
from app.core.pipeline.options import (
           DEFAULT_OCR_DPI,
           PipelineError,
           PipelineOptions,
           parse_pages,
)
from app.core.pipeline.output import (
           JSON_SCHEMA,
           DocumentOutput,
           PageOutput,
           block_dict,
           write_document,
)
from app.core.pipeline.run import Pipeline

__all__ = ["DEFAULT_OCR_DPI", "JSON_SCHEMA", "DocumentOutput", "PageOutput", "Pipeline", "PipelineError",
           "PipelineOptions", "block_dict", "parse_pages", "write_document"]
