"""How a test reads a file through a real Pipeline and lets go of the document afterwards."""
from __future__ import annotations


def read(path, **options):
    """The DocumentOutput of `path` read with PipelineOptions(**options) (classic engine, text layer preferred
    unless told otherwise); the pipeline is closed whatever happens."""
    from app.core.pipeline import Pipeline, PipelineOptions

    pipe = Pipeline(PipelineOptions(**{"engine": "classic", "text_layer": "prefer", **options}))
    try:
        return pipe.run(path)
    finally:
        pipe.close()
