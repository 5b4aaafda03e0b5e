"""The tiny PP-DocLayoutV3 checkpoint round-trips through the app's loader and runs one real forward."""


def test_loads_through_the_loader_and_detects(tiny_doclayout_dir):
    import torch
    from PIL import Image

    from app.core.checkpoints.loader import load_model

    lm = load_model("pp-doclayoutv3", tiny_doclayout_dir, device="cpu", dtype="fp32", attn_implementation=None)
    assert type(lm.model).__name__ == "PPDocLayoutV3ForObjectDetection"
    assert lm.dtype == torch.float32 and lm.device == "cpu"
    page = Image.new("RGB", (300, 400), "white")
    inputs = lm.processor(images=page, return_tensors="pt")
    with torch.no_grad():
        out = lm.model(**inputs)
    queries = lm.model.config.num_queries
    assert out.logits.shape[:2] == (1, queries) and out.pred_boxes.shape == (1, queries, 4)
    assert torch.isfinite(out.logits).all()
    result = lm.processor.post_process_object_detection(out, threshold=0.3, target_sizes=[(400, 300)])[0]
    assert len(result["boxes"]) > 0  # the kit's label bias makes real boxes come out of the real head
    assert (result["boxes"][:, 2] <= 300 + 1e-3).all() and (result["boxes"][:, 3] <= 400 + 1e-3).all()
