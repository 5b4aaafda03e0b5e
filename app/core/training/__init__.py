"""Training the built-in line reader: GravityOCR's joint AR + block-diffusion objective on a tiny GlmOcr.

- `vocab`     the character-level tokenizer (plus the GLM-OCR special tokens and `<|mask|>`);
- `model`     tiny `GlmOcrForConditionalGeneration` configs, checkpoint writing (what `load_model("builtin")` reads);
- `objective` the joint forward (clean stream + two complementary corrupted streams), its masks and losses;
- `synthetic` the synthetic printed-line generator (texts, fonts, rendering, degradations, parallel workers);
- `batches`   images → the processor's patch layout, batch assembly;
- `trainer`   the resumable training loop, held-out evaluation and the model card.

What must never live here: decoding for the app (app.core.decoding) or anything Qt.
"""
