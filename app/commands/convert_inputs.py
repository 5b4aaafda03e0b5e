"""Several inputs of one `convert` (a folder, or many files; "batch" in this project means regions read together
in one forward, app.core.decoding.batch): folders walked into inputs with a mirrored output tree, the per-page checkpoint
that lets `--resume` skip finished pages, one progress display across documents (rich), the closing summary table.

Checkpoint: OUTDIR/.scriptorium-checkpoint/<relative stem>.json holds the finished pages of one input (their
regions, text and stats), rewritten atomically after every finished page, tied to the input's size and time and to
the settings that change what a page reads as. A resumed run restores those pages and reads only the others; when
an input's output set is written, its checkpoint says so and a resumed run skips it whole. A run that went through
every input removes the checkpoints (OUTDIR then holds the output sets only).

What must never live here: decoding or layout (the pipeline), argument parsing (convert).
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from app.core.document.base import DOCUMENT_SUFFIXES

CHECKPOINT_DIR = ".scriptorium-checkpoint"


@dataclass(frozen=True)
class Input:
    path: Path
    rel: Path  # output stem relative to OUTDIR (a folder's tree mirrored; "a/b/report" → OUTDIR/a/b/report.md)


def expand_inputs(raw: list[str]) -> tuple[list[Input], list[str]]:
    """Files as given, folders walked recursively (documents and images, sorted); a later input whose relative
    stem an earlier one took gets "-2", "-3"... Returns the inputs and the folders that held none."""
    items: list[tuple[Path, Path]] = []
    empty = []
    for text in raw:
        p = Path(text)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in DOCUMENT_SUFFIXES
                           and not any(part.startswith(".") for part in f.relative_to(p).parts))
            if not found:
                empty.append(text)
            items += [(f, f.relative_to(p).with_suffix("")) for f in found]
        else:
            items.append((p, Path(p.stem or "document")))
    taken: set[str] = set()
    out = []
    for path, rel in items:
        stem, n = rel.name, 1
        while str(rel.with_name(stem)).lower() in taken:  # case-insensitive file systems would collide too
            n += 1
            stem = f"{rel.name}-{n}"
        taken.add(str(rel.with_name(stem)).lower())
        out.append(Input(path, rel.with_name(stem)))
    return out, empty


def page_count(path: Path) -> int:
    """Pages of an input for the progress total (1 when it cannot be opened: the run will say why)."""
    from app.core.document import DocumentError, open_document

    try:
        doc = open_document(path)
    except (DocumentError, OSError, ValueError):
        return 1
    try:
        return doc.page_count
    finally:
        doc.close()


# --- checkpoint ---------------------------------------------------------------------------------------------------

def page_to_dict(page) -> dict[str, Any]:
    d = {f.name: getattr(page, f.name) for f in fields(page) if f.name != "regions"}
    d["regions"] = [r.to_dict() for r in page.regions]
    return d


def page_from_dict(d: dict[str, Any]):
    from app.core.pipeline.output import PageOutput
    from app.core.document.regions import Region

    names = {f.name for f in fields(PageOutput)}
    page = PageOutput(**{k: v for k, v in d.items() if k in names and k != "regions"})
    page.regions = [Region.from_dict(r) for r in d.get("regions", [])]
    return page


@dataclass
class Checkpoint:
    out_dir: Path
    item: Input
    settings: dict[str, Any]
    pages: dict[int, Any] = field(default_factory=dict)  # index → PageOutput
    done: bool = False
    engine: str = ""
    layout: str = ""
    input_dpi: float = 0.0  # the engine's crop DPI: a run that only writes restored pages saves pictures at it

    @property
    def path(self) -> Path:
        return self.out_dir / CHECKPOINT_DIR / f"{self.item.rel.as_posix()}.json"

    def _source(self) -> dict[str, Any]:
        st = self.item.path.stat()
        return {"path": str(self.item.path.resolve()), "size": st.st_size, "mtime": st.st_mtime}

    def load(self) -> str:
        """Read a checkpoint of the same input and settings; returns why none was used ("" when one was)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return "no checkpoint"
        except (OSError, ValueError) as exc:
            return f"its checkpoint cannot be read ({exc})"
        try:
            if data.get("source") != self._source() or data.get("settings") != self.settings:
                return "the input or the settings changed since its checkpoint"
            self.pages = {int(p["index"]): page_from_dict(p) for p in data.get("pages", [])}
        except (OSError, KeyError, TypeError, ValueError) as exc:
            return f"its checkpoint cannot be read ({exc})"
        self.done, self.engine, self.layout = bool(data.get("done")), data.get("engine", ""), data.get("layout", "")
        dpi = data.get("input_dpi", 0.0)
        self.input_dpi = float(dpi) if isinstance(dpi, (int, float)) and dpi > 0 else 0.0
        return ""

    def save(self) -> None:
        from app.core.base.atomic import atomic_write_text

        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"source": self._source(), "settings": self.settings, "done": self.done, "engine": self.engine,
                "layout": self.layout, "input_dpi": self.input_dpi,
                "pages": [page_to_dict(self.pages[i]) for i in sorted(self.pages)]}
        atomic_write_text(self.path, json.dumps(data, ensure_ascii=False))

    def page_finished(self, page, engine: str, layout: str, input_dpi: float) -> None:
        self.pages[page.index] = page
        self.engine, self.layout, self.input_dpi = engine, layout, float(input_dpi)
        self.save()


def discard_checkpoints(out_dir: Path) -> None:
    """A run over several inputs went through to its end: its checkpoints have served (OUTDIR keeps only the output sets)."""
    import shutil

    shutil.rmtree(out_dir / CHECKPOINT_DIR, ignore_errors=True)


def checkpoint_settings(options) -> dict[str, Any]:
    """The options that change what a page reads as (a resumed run with other ones starts afresh)."""
    keys = ("engine", "model_path", "layout", "layout_model_path", "dpi", "ocr_dpi", "keep_headers", "block_size",
            "compare_text_layer", "rotate")
    d = asdict(options)
    out = {k: d.get(k) for k in keys}
    out["engine_options"] = {k: v for k, v in (options.engine_options or {}).items() if k in _text_options(options.engine)}
    return json.loads(json.dumps(out, default=str))


def _text_options(engine: str) -> set[str]:
    """The engine options that change what a page reads as: its spec's (secrets and speed-only ones aside) and the
    token cap."""
    from app.core.engines import ENGINES

    spec = ENGINES.get(engine)
    return {"max_new_tokens"} | {o.name for o in (spec.options if spec else ()) if o.changes_text and not o.secret}


# --- progress and summary -----------------------------------------------------------------------------------------

class ConvertProgress:
    """One progress display for all the inputs on stderr (a terminal only): documents, pages, regions, tokens/s
    and the time left, from the run's events."""

    def __init__(self, total_pages: int, documents: int, enabled: bool) -> None:
        self.enabled = enabled
        self.total_pages, self.documents = max(1, total_pages), documents
        self.pages_done = self.document = 0
        self.region = self.regions = 0
        self.tokens = 0
        self.name = ""
        self.t0 = time.perf_counter()
        self._bar = None
        if enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[detail]}"),
                                 TimeRemainingColumn(), console=Console(stderr=True), transient=True,
                                 refresh_per_second=10)
            self._task = self._bar.add_task("", total=self.total_pages, detail="")
            self._bar.start()

    def start_document(self, name: str, restored_pages: int = 0) -> None:
        self.document += 1
        self.name = name
        self.pages_done += restored_pages
        self.region = self.regions = 0
        self._draw()

    def __call__(self, event) -> None:
        from app.core.record import events as ev

        if isinstance(event, ev.PhaseChanged) and event.phase == "decoding":
            self.region, self.regions = event.current, event.total
        elif isinstance(event, ev.PageFinished):
            self.pages_done += 1
        elif isinstance(event, ev.TokensCommitted):
            self.tokens += len(event.tokens)
        elif isinstance(event, ev.RoundVerified):
            self.tokens += len(event.new_tokens)
        elif isinstance(event, ev.RegionFinished) and not event.tokens:  # a server's reply: its token count
            self.tokens += int(event.stats.get("tokens") or 0)
        else:
            return
        self._draw()

    def skip_pages(self, n: int) -> None:
        self.pages_done += n
        self._draw()

    def _draw(self) -> None:
        if self._bar is None:
            return
        rate = self.tokens / max(1e-6, time.perf_counter() - self.t0)
        detail = (f"doc {self.document}/{self.documents} · page {self.pages_done}/{self.total_pages} · region "
                  f"{self.region}/{self.regions} · {rate:.1f} tok/s")
        self._bar.update(self._task, completed=min(self.pages_done, self.total_pages), detail=detail,
                         description=self.name[:28])

    def clear(self) -> None:
        """Hide the display (before a line is printed) and stop it."""
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


@dataclass
class FileResult:
    name: str
    outcome: str  # converted | warnings | failed | interrupted | skipped (already converted)
    done: int = 0
    warnings: int = 0
    failed: int = 0
    truncated: int = 0


def count_regions(output) -> dict[str, int]:
    """done / failed / truncated regions of an output, by the one status rule (app.core.pipeline.output)."""
    from app.core.pipeline.output import region_status

    statuses = [region_status(r) for r in output.regions()]
    return {"done": statuses.count("done"), "failed": statuses.count("failed"),
            "truncated": statuses.count("truncated")}


def report_converted(inp: Path, out, files: dict, warnings: list[str], result: FileResult, restored: int,
                     seconds: float) -> None:
    """An input's output set is written: its warnings on stderr, its row of the summary filled in, and its one
    line (pages, regions, engine, layout, rate, CER, time, the file written)."""
    from app.core.base.wording import count

    s = out.stats
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    counts = count_regions(out)
    result.outcome = "warnings" if warnings else "converted"
    result.done, result.failed, result.truncated, result.warnings = (counts["done"], counts["failed"],
                                                                    counts["truncated"], len(warnings))
    cer = f", CER vs text layer {s['cer']:.1%}" if s.get("cer") is not None else ""
    rate = f", {s['tokens_per_s']:.1f} tok/s" if s.get("tokens_per_s") else ""
    if s.get("text_layer_blocks"):
        cer += f", {count(s['text_layer_blocks'], 'block')} from the text layer"
    flag = f", {count(len(warnings), 'warning')}" if warnings else ""
    cut = f", {count(counts['truncated'], 'region')} truncated" if counts["truncated"] else ""
    resumed = f", {count(restored, 'page')} from the checkpoint" if restored else ""
    written = next(iter(p for k, p in files.items() if k != "images"))
    print(f"{inp.name}: {count(s['pages'], 'page')}, {count(s['regions'], 'region')} ({s['decoded']} read, "
          f"{count(s['pictures'], 'picture')}{cut}), engine {out.engine}, layout {out.layout}{rate}{cer}{resumed}, "
          f"{seconds:.1f} s{flag} → {written}")


def print_summary(results: list[FileResult]) -> None:
    """The closing table: per file its outcome and done / warnings / failed / truncated regions."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title="convert: summary", title_justify="left")
    for name in ("file", "outcome", "done", "warnings", "failed", "truncated"):
        table.add_column(name, justify="left" if name in ("file", "outcome") else "right")
    for r in results:
        table.add_row(r.name, r.outcome, str(r.done), str(r.warnings), str(r.failed), str(r.truncated))
    total = FileResult("total", f"{sum(r.outcome in ('converted', 'skipped') for r in results)}/{len(results)} clean",
                       *(sum(getattr(r, k) for r in results) for k in ("done", "warnings", "failed", "truncated")))
    table.add_row(total.name, total.outcome, str(total.done), str(total.warnings), str(total.failed),
                  str(total.truncated), end_section=True)
    Console(file=sys.stdout, width=110, no_color=True).print(table)


# --- documents overlapped on one region queue ---------------------------------------------------------------------

class Overlap:
    """`convert` of several inputs on an engine of servers: every input is converted on a thread of its own, and
    the next one starts as soon as the previous one has handed its last regions to the shared region queue (or has
    ended), so its opening and layout overlap the previous one's last requests and the servers are not left idle
    between documents. One document's pipeline code runs at a time (the queue's baton: PyMuPDF and the layout model
    are not thread-safe), outputs are written — and summary lines printed — in input order, and each input keeps its
    own checkpoint, trace and summary row. Ctrl+C cancels every document started (the shared cancel token)."""

    def __init__(self, count: int, loop, cancel) -> None:
        import threading

        from app.core.engines.region_queue import SharedRegions

        self.count, self.cancel = count, cancel
        self.shared = SharedRegions(loop)
        self.shared.on_tail = self._tail
        self.next_may_start = [threading.Event() for _ in range(count)]
        self.ended = [threading.Event() for _ in range(count)]
        self.codes: list[int | None] = [None] * count
        self.models: dict[str, object] = {"engine": None, "layout": None}

    def _tail(self, rank: int, engine, layout) -> None:
        self.models["engine"], self.models["layout"] = engine, layout  # the next input reuses them
        self.next_may_start[rank].set()

    def seat(self, rank: int):
        """Input `rank`'s place in the shared region queue (a Pipeline's `seat`)."""
        from app.core.engines.region_queue import Seat

        return Seat(self.shared, rank)

    def wait_turn(self, rank: int) -> None:
        """Before a document writes: every earlier one has ended (the baton given up meanwhile)."""
        with self.shared.baton.given_up(rank):
            for k in range(rank):
                self.ended[k].wait()

    def run(self, convert_one, stop) -> list[int | None]:
        """`convert_one(rank)` → exit code for each input on its thread; no further input starts once
        `stop(code)` holds for one that ended. Returns the codes (None: not started)."""
        import threading

        def body(rank: int) -> None:
            self.shared.baton.acquire(rank)
            try:
                self.codes[rank] = convert_one(rank)
            except Exception as exc:  # noqa: BLE001 - a bug must still end in a message and let the other inputs go on
                print(f"error: unexpected {type(exc).__name__}: {exc} (please report it)", file=sys.stderr)
                self.codes[rank] = 1  # convert's EXIT_INPUT
            finally:
                self.shared.baton.release()
                self.next_may_start[rank].set()
                self.ended[rank].set()

        threads = []
        try:
            for rank in range(self.count):
                if rank:
                    while not self.next_may_start[rank - 1].wait(0.1):  # short waits: Ctrl+C reaches this thread
                        pass
                    if any(c is not None and stop(c) for c in self.codes[:rank]):
                        break
                thread = threading.Thread(target=body, args=(rank,), name=f"convert-{rank + 1}", daemon=True)
                thread.start()
                threads.append(thread)
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.1)
        except KeyboardInterrupt:
            self.cancel.cancel()  # every document started stops; what they finished stays (their checkpoints)
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.1)
            raise
        finally:
            self.shared.close()
        return self.codes
