"""app.core.base.atomic: a write either lands whole or leaves the old file; no temporary file is left behind."""
from __future__ import annotations

import os
import stat

import pytest
from PIL import Image

from app.core.base.atomic import atomic_file, atomic_save_image, atomic_write_text


def test_text_lands_whole_with_plain_permissions(tmp_path):
    path = atomic_write_text(tmp_path / "sub" / "a.md", "héllo\nworld\n")
    assert path.read_text(encoding="utf-8") == "héllo\nworld\n"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask
    assert os.listdir(path.parent) == ["a.md"]


def test_failure_mid_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "a.json"
    path.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError):
        with atomic_file(path, "w", encoding="utf-8") as f:
            f.write("half of the new")
            raise RuntimeError("disk full")
    assert path.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["a.json"]


def test_image_is_saved_as_png_whatever_the_name(tmp_path):
    path = atomic_save_image(Image.new("RGB", (3, 2), "red"), tmp_path / "crop.bin")
    with Image.open(path) as im:
        assert (im.format, im.size) == ("PNG", (3, 2))
