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
