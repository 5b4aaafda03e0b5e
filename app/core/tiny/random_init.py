"""The tiny kit's weight initialisation, shared by its checkpoints: every parameter redrawn from N(0, std²) with a
seeded generator (norm weights stay at 1). A larger std than the HF default gives greedy decoding clear top-1
margins, so outputs are long and deterministic. What must never live here: model-specific code."""
from __future__ import annotations


def randomise(model, seed: int, std: float):
    """Redraw `model`'s parameters in place; returns the generator, positioned after them (for further draws)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "norm" in name and param.dim() == 1:
                continue  # norm weights stay at 1
            param.copy_(torch.randn(param.shape, generator=gen) * std)
    return gen
