"""How a test reads a file through a real Pipeline and lets go of the document afterwards."""
from __future__ import annotations


def read(path, *, markdown: bool = False, engine=None, layout=None, **options):
    """The DocumentOutput of `path` (its Markdown without anchors with `markdown=True`) read with
    PipelineOptions(**options) (classic engine, text layer preferred unless told otherwise), or with an engine and a
    layout already open; the pipeline is closed whatever happens."""
    from app.core.pipeline import Pipeline, PipelineOptions

    pipe = Pipeline(PipelineOptions(**{"engine": "classic", "text_layer": "prefer", **options}), engine=engine,
                    layout=layout)
    try:
        out = pipe.run(path)
        return out.to_markdown(anchors=False) if markdown else out
    finally:
        pipe.close()
