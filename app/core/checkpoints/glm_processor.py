"""GLM-OCR family glue: an image-only processor (the stock Glm46VProcessor insists on a video processor, which needs
a working torchvision) and helpers to read the checkpoint's decoding facts."""
from __future__ import annotations

import functools
from pathlib import Path

# The GLM-4.1V / GLM-OCR chat template structure (a real checkpoint ships its own chat_template.jinja;
# checkpoints we build ourselves, the tiny test kit and the trained built-in model, use this one).
CHAT_TEMPLATE = (
    "[gMASK]<sop>"
    "{%- for msg in messages %}"
    "{%- if msg.role == 'system' %}<|system|>{{ '\\n' }}{{ msg.content }}"
    "{%- elif msg.role == 'user' %}<|user|>{{ '\\n' }}"
    "{%- if msg.content is string %}{{ msg.content }}"
    "{%- else %}{%- for item in msg.content %}"
    "{%- if item.type == 'image' or 'image' in item %}<|begin_of_image|><|image|><|end_of_image|>"
    "{%- elif item.type == 'text' %}{{ item.text }}"
    "{%- endif %}{%- endfor %}{%- endif %}"
    "{%- elif msg.role == 'assistant' %}<|assistant|>{{ '\\n' }}{{ msg.content }}"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

# The real checkpoint's special tokens, in their real relative order, then GravityOCR's mask token. Checkpoints we
# build (the tiny test kit, the built-in model) add them in this order after their own vocabulary.
SPECIAL_TOKENS = (
    "<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>", "<|assistant|>",
    "<|observation|>", "<|begin_of_image|>", "<|end_of_image|>", "<|begin_of_video|>", "<|end_of_video|>",
    "<|image|>", "<|video|>", "<|mask|>",
)
EOS_TOKEN = "<|endoftext|>"
MASK_TOKEN = "<|mask|>"
STOP_TOKENS = (EOS_TOKEN, "<|user|>")  # the real generation config's eos_token_id list


def mrope_section(head_dim: int) -> list[int]:
    """M-RoPE (temporal, height, width) split of the rotary half of a head, in GLM-4.1V's 2:3:3 proportions
    (sum == head_dim / 2 at partial_rotary_factor 1)."""
    half = head_dim // 2
    return [half - 2 * (half * 3 // 8), half * 3 // 8, half * 3 // 8]


def config_token_ids(ids: dict[str, int]) -> dict[str, int]:
    """The `GlmOcrConfig` keywords that name special tokens, from a token → id map of SPECIAL_TOKENS."""
    return dict(
        image_token_id=ids["<|image|>"], video_token_id=ids["<|video|>"],
        image_start_token_id=ids["<|begin_of_image|>"], image_end_token_id=ids["<|end_of_image|>"],
        video_start_token_id=ids["<|begin_of_video|>"], video_end_token_id=ids["<|end_of_video|>"],
    )


@functools.cache
def image_only_processor_class():
    from transformers.models.glm46v.processing_glm46v import Glm46VProcessor

    class GlmOcrImageOnlyProcessor(Glm46VProcessor):
        """Glm46VProcessor without the video sub-processor; OCR feeds images only."""

        attributes = ["image_processor", "tokenizer"]

        def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
            super().__init__(image_processor, tokenizer, video_processor=None, chat_template=chat_template, **kwargs)

    return GlmOcrImageOnlyProcessor


_image_only_processor_class = image_only_processor_class  # the name other modules first knew


def load_glmocr_processor(folder: Path):
    """The checkpoint's processor as the image-only variant: it reads the same files as the stock Glm46VProcessor
    and works with or without torchvision (OCR never feeds video)."""
    return image_only_processor_class().from_pretrained(folder, local_files_only=True)
