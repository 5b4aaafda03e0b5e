"""The picture store: where picture regions' crops are kept, how they are saved and linked, and when they go.

Two places hold crops: the working folder of a document open in the window (`pictures_dir`, saved at layout time
so the editor and preview can show them; pruned when a run ends and removed when the document closes), and
`<stem>_images/` beside an export or a `convert` output.

What must never live here: Qt, layout, Markdown rules (app.core.pipeline.assembly).
"""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Callable, Iterable

from app.core.base.atomic import atomic_save_image
from app.core.document import Document, DocumentError
from app.core.document.regions import Region

# called with (region, message) when a crop cannot be saved
Failed = Callable[[Region, str], None]


def pictures_dir(document_path: str) -> Path:
    """The working folder of a document's crops: one folder per document under the user data folder, named by a
    hash of its path (no spaces, so the Markdown links stay plain)."""
    from app.core.base.paths import user_data_dir

    return user_data_dir() / "pictures" / hashlib.sha1(str(document_path).encode("utf-8")).hexdigest()[:16]


def picture_link(path: str) -> str:
    """The link a picture block uses in the editor: relative to the user data folder (the preview resolves it
    there), else a file URL."""
    from app.core.base.paths import user_data_dir

    p = Path(path)
    try:
        return p.resolve().relative_to(user_data_dir().resolve()).as_posix()
    except ValueError:
        return p.resolve().as_uri()


def save_crop(document: Document, region: Region, dpi: float, path: Path, failed: Failed) -> bool:
    try:
        atomic_save_image(document.crop(region.page, region.box_pt, dpi), path)
    except (DocumentError, OSError) as exc:
        failed(region, f"picture {region.id} could not be saved ({exc})")
        return False
    return True


def turn_as_read(document: Document, pages: Iterable) -> None:
    """Turn and straighten each of `pages` (PageOutputs) in `document` as it was read, where the document does not
    know it: pages read in another process (a `convert --jobs` worker, a checkpoint) are written through a document
    opened afresh, and a skewed scan's pictures came out of the page as it lies. (A page keeps its skew rounded.)"""
    for page in pages:
        turn, skew = document.orientation(page.index)
        if (turn, round(skew, 2)) != (page.rotation, page.skew):
            document.set_orientation(page.index, page.rotation, page.skew)


def keep_pictures(document: Document, regions: Iterable[Region], folder: str | Path, dpi_of: Callable[[int], float],
                  failed: Failed) -> None:
    """Save the picture regions of a freshly laid-out page into `folder` and note each file in
    `region.extra["picture_path"]` (so LayoutDone carries it to the editor and preview)."""
    for r in regions:
        if r.task == "picture":
            path = Path(folder) / f"{r.id}.png"
            if save_crop(document, r, dpi_of(r.page), path, failed):
                r.extra["picture_path"] = str(path)


def copy_pictures(regions: Iterable[Region], out_dir: Path, image_dir: str) -> dict[str, str]:
    """Copy the kept crops of picture regions to `out_dir/image_dir/<id>.png` (a review export); returns region id →
    path relative to out_dir. Crops not on this machine (a replayed trace) are left out."""
    rels: dict[str, str] = {}
    for r in regions:
        src = r.extra.get("picture_path") if r.task == "picture" else None
        if not src or not Path(src).is_file():
            continue
        rel = f"{image_dir}/{r.id}{Path(src).suffix or '.png'}"
        (out_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, out_dir / rel)
        rels[r.id] = rel
    return rels


def prune_pictures(document_path: str, regions: Iterable[Region]) -> list[Path]:
    """Delete the crops in the document's working folder that none of `regions` links to any more (a re-run laid
    the page out again and the region is gone, or is no longer a picture). Called when a run of the document ends,
    so the worker has saved every crop it meant to. Returns the deleted files."""
    folder = pictures_dir(document_path)
    if not folder.is_dir():
        return []
    keep = set()
    for r in regions:
        path = r.extra.get("picture_path")
        if isinstance(path, str) and path and Path(path).parent.resolve() == folder.resolve():
            keep.add(Path(path).name)
    removed = []
    for f in folder.glob("*.png"):
        if f.name not in keep:
            try:
                f.unlink()
                removed.append(f)
            except OSError:
                pass
    return removed
