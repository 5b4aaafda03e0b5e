"""Training the built-in line reader (app.core.engines.builtin) with GravityOCR's joint AR + block-diffusion objective.

- `linedata`     training and held-out lines: texts, fonts, rendering, degradations, the recogniser's readings (cached);
- `synthetic`    the texts and fonts lines are made from;
- `objective`    the joint forward (clean stream + two complementary corrupted streams), its masks and losses;
- `reader_train` the resumable training loop; `reader_card` the model card; `heldout_pdf` held-out printed pages.

Training imports the engine's runtime (its model, prefix codec and vocabulary) so that what is trained is what the
app decodes; the engine never imports training.
"""
