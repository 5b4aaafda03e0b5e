"""A tiny, randomly initialised PP-DocLayoutV3 checkpoint of the real `PPDocLayoutV3ForObjectDetection` class.

`build(out_dir)` writes config.json, model.safetensors and preprocessor_config.json (`PPDocLayoutV3ImageProcessor`
at a small input size); `app.core.checkpoints.loader.load_model("pp-doclayoutv3", out_dir)` loads it offline. Sizes follow
transformers' own model tester (HGNetV2 backbone with 32 channels, d_model 32, 2 decoder layers, 30 queries) and
the label set is the 25 ids of the GLM-OCR SDK (PaddleOCR 3.x names).

Random weights give scores near the prior (~1/26), so nothing would pass the 0.3 threshold. `label_bias` adds a
constant to the classification heads' bias of chosen labels (default: +4 for "text", +3 for "table", +3 for
"image") so that a forward yields boxes and the whole post-processing chain runs on real model output. The boxes
are random but deterministic for a seed. What must never live here: post-processing or pipeline code.
"""
from __future__ import annotations

from pathlib import Path

LABELS = (
    "abstract", "algorithm", "aside_text", "chart", "content", "display_formula", "doc_title", "figure_title",
    "footer", "footer_image", "footnote", "formula_number", "header", "header_image", "image", "inline_formula",
    "number", "paragraph_title", "reference", "reference_content", "seal", "table", "text", "vertical_text",
    "vision_footnote",
)
DEFAULT_BIAS = {"text": 4.0, "table": 3.0, "image": 3.0}


def tiny_config(image_size: int = 256, num_queries: int = 30):
    from transformers import PPDocLayoutV3Config

    backbone = {
        "model_type": "hgnet_v2", "arch": "L", "return_idx": [0, 1, 2, 3], "hidden_sizes": [32, 32, 32, 32],
        "stem_channels": [3, 32, 32], "stage_in_channels": [32, 32, 32, 32], "stage_mid_channels": [32, 32, 32, 32],
        "stage_out_channels": [32, 32, 32, 32], "freeze_stem_only": True, "freeze_at": 0, "freeze_norm": True,
        "lr_mult_list": [0, 0.05, 0.05, 0.05, 0.05], "out_features": ["stage1", "stage2", "stage3", "stage4"],
    }
    return PPDocLayoutV3Config(
        backbone_config=backbone, encoder_hidden_dim=32, encoder_in_channels=[32, 32, 32], feat_strides=[8, 16, 32],
        encoder_layers=1, encoder_ffn_dim=64, encoder_attention_heads=2, mask_feature_channels=[32, 32],
        x4_feat_dim=32, d_model=32, num_queries=num_queries, decoder_in_channels=[32, 32, 32], decoder_ffn_dim=8,
        num_feature_levels=3, decoder_n_points=4, decoder_layers=2, decoder_attention_heads=2, num_denoising=0,
        anchor_image_size=None, disable_custom_kernels=True,
        id2label=dict(enumerate(LABELS)), label2id={name: i for i, name in enumerate(LABELS)},
    )


def build(out_dir, *, seed: int = 0, image_size: int = 256, num_queries: int = 30,
          label_bias: dict[str, float] | None = None) -> Path:
    import torch
    from transformers import PPDocLayoutV3ForObjectDetection
    from transformers.models.pp_doclayout_v3.image_processing_pp_doclayout_v3 import PPDocLayoutV3ImageProcessor

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    config = tiny_config(image_size, num_queries)
    model = PPDocLayoutV3ForObjectDetection(config).eval()
    bias = DEFAULT_BIAS if label_bias is None else label_bias
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, torch.nn.Linear) and module.out_features == len(LABELS) and module.bias is not None:
                for label, value in bias.items():
                    module.bias[LABELS.index(label)] += value
    model.save_pretrained(out, safe_serialization=True)
    PPDocLayoutV3ImageProcessor(size={"height": image_size, "width": image_size}).save_pretrained(out)
    return out
