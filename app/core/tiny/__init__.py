"""Tiny, randomly initialised checkpoints of the real transformers classes, built at run time (tests, benchmarks,
training). Each module has `build(out_dir, *, seed=0, ...) -> Path` that writes a complete checkpoint folder
(config, safetensors, in-memory tokenizer, processor files) loadable by app.core.checkpoints.loader.load_model."""
