"""How a test reads a file through a real Pipeline and lets go of the document afterwards."""
from __future__ import annotations


def read(path, *, markdown: bool = False, engine=None, layout=None, **options):
    """The DocumentOutput of `path` (its Markdown without anchors with `markdown=True`) read with
    PipelineOptions(**options) (classic engine, text layer preferred unless told otherwise; `engine` and `layout` by
    name, or already open); the pipeline is closed whatever happens."""
    from app.core.pipeline import Pipeline, PipelineOptions

    for name, given in (("engine", engine), ("layout", layout)):
        if isinstance(given, str):  # a name is an option; an open engine or layout is handed to the pipeline
            options[name] = given
    engine, layout = (None if isinstance(v, str) else v for v in (engine, layout))
    pipe = Pipeline(PipelineOptions(**{"engine": "classic", "text_layer": "prefer", **options}), engine=engine,
                    layout=layout)
    try:
        out = pipe.run(path)
        return out.to_markdown(anchors=False) if markdown else out
    finally:
        pipe.close()
