"""The resumable training loop for the built-in line reader, its held-out evaluation and its model card.

One step: a batch of rendered lines → `objective.joint_forward` (clean + two complementary corrupted streams) →
(L_AR + λ·L_diff)/(1+λ) + an auxiliary per-character loss on the image tokens (training only: a linear head reads
the character under each 16-px column from the vision features; the head is not part of the checkpoint). On CUDA it
runs in bf16 autocast with data rendered by worker processes; on CPU the same code runs slowly (tests, checks).

Files in the output folder: the checkpoint (config.json, model.safetensors, tokenizer, processor files,
block_diffusion.json, MODEL_CARD.md), `train_log.jsonl`, and `.train/state.safetensors` + `.train/state.json` (model, optimizer, step: resume).
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from app.core.training.synthetic import LineBatch

BAR_CER = 0.05  # held-out clean rendered lines
BAR_PDF_CER = 0.10  # lines cropped from the bundled sample PDF


@dataclass
class TrainConfig:
    out: str
    device: str = "auto"
    minutes: float | None = 10.0  # wall-time budget for the whole run (training + final evaluation)
    steps: int | None = None  # or a step budget (whichever ends first)
    batch_size: int | None = None  # None: 256 on CUDA, 16 on CPU
    lr: float = 5e-4
    min_lr_ratio: float = 0.1
    warmup_steps: int = 200
    weight_decay: float = 0.01
    preset: str = "small"
    block_size: int = 16
    lam: float = 1.0
    aux_weight: float = 0.3
    workers: int | None = None  # render processes; None: all cores but two on CUDA, 0 on CPU
    seed: int = 0
    resume: bool = False
    eval_lines: int = 256
    eval_every_steps: int = 0  # 0: only at the end
    save_every_minutes: float = 2.0
    log_every: int = 25
    max_width: int = 1280
    save_dtype: str = "fp32"
    final_eval: bool = True  # after training: the app's AR and self-spec engines on CPU (model-card figures)
    final_eval_lines: int = 64
    amp: bool | None = None  # bf16 autocast; None: on CUDA only (True on CPU exercises the GPU dtype path in tests)
    fixed_lines: list | None = field(default=None, repr=False)  # overfit mode: train on these Line objects only


def _lr_at(cfg: TrainConfig, step: int, progress: float) -> float:
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    cos = 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * cos)


class Trainer:
    def __init__(self, cfg: TrainConfig, log: Callable[[str], None] = print):
        import torch

        from app.core.loader import pick_device
        from app.core.training.model import build_model

        self.cfg, self.log = cfg, log
        self.out = Path(cfg.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.device = pick_device(cfg.device)
        self.cuda = self.device.startswith("cuda")
        self.amp = self.cuda if cfg.amp is None else bool(cfg.amp)
        self.amp_device = "cuda" if self.cuda else "cpu"
        if cfg.batch_size is None:
            cfg.batch_size = 256 if self.cuda else 16
        if cfg.workers is None:
            cfg.workers = max(1, (os.cpu_count() or 2) - 2) if self.cuda else 0
        if self.cuda:
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        self.model, self.processor = build_model(cfg.preset, seed=cfg.seed)
        self.tok = self.processor.tokenizer
        self.eos = self.tok.convert_tokens_to_ids("<|endoftext|>")
        self.mask_id = self.tok.convert_tokens_to_ids("<|mask|>")
        hidden = self.model.config.text_config.hidden_size
        self.aux_head = torch.nn.Linear(hidden, len(self.tok))
        self.model.to(self.device).train()
        self.aux_head.to(self.device)
        params = list(self.model.parameters()) + list(self.aux_head.parameters())
        self.opt = torch.optim.AdamW(params, lr=cfg.lr, betas=(0.9, 0.98), weight_decay=cfg.weight_decay,
                                     fused=self.cuda)
        self._prefix_cache: dict = {}
        self.sync_parts = not self.cuda  # on CUDA the loss values stay on the device until they are logged
        self.step = 0
        self.lines_seen = 0
        self.train_seconds = 0.0
        self.history: list[dict[str, Any]] = []
        self.state_path = self.out / ".train" / "state.safetensors"
        self.meta_path = self.out / ".train" / "state.json"
        if cfg.resume and self.state_path.is_file() and self.meta_path.is_file():
            self._load_state()
        elif cfg.resume:
            self.log(f"nothing to resume in {self.out} (no {self.state_path.parent.name}/{self.state_path.name}); "
                     "starting a new run")

    # --- state ---------------------------------------------------------------------------------------------------

    def _save_state(self) -> None:
        """Resume state as safetensors (tensors) + JSON (everything else): nothing here is ever unpickled."""
        from safetensors.torch import save_file

        tensors: dict = {}
        for prefix, sd in (("model.", self.model.state_dict()), ("aux.", self.aux_head.state_dict())):
            tensors.update({prefix + k: v.detach().clone().contiguous() for k, v in sd.items()})
        opt = self.opt.state_dict()
        opt_scalars: dict = {}
        for pid, slots in opt["state"].items():
            for name, value in slots.items():
                if hasattr(value, "detach"):
                    tensors[f"opt.{pid}.{name}"] = value.detach().clone().contiguous()
                else:
                    opt_scalars[f"{pid}.{name}"] = value
        meta = {
            "param_groups": opt["param_groups"], "opt_scalars": opt_scalars,
            "step": self.step, "lines_seen": self.lines_seen, "train_seconds": self.train_seconds,
            "preset": self.cfg.preset, "block_size": self.cfg.block_size, "seed": self.cfg.seed,
        }
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_name(self.state_path.name + ".tmp")
        save_file(tensors, str(tmp))
        meta_tmp = self.meta_path.with_name(self.meta_path.name + ".tmp")
        meta_tmp.write_text(json.dumps(meta), encoding="utf-8")
        os.replace(tmp, self.state_path)
        os.replace(meta_tmp, self.meta_path)

    def _load_state(self) -> None:
        from safetensors.torch import load_file

        meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
        if meta["preset"] != self.cfg.preset or meta["block_size"] != self.cfg.block_size:
            raise ValueError(f"{self.state_path} was trained with preset {meta['preset']!r}, block size "
                             f"{meta['block_size']}; pass the same --preset/--block-size to resume")
        tensors = load_file(str(self.state_path), device=str(self.device))

        def part(prefix: str) -> dict:
            return {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}

        self.model.load_state_dict(part("model."))
        self.aux_head.load_state_dict(part("aux."))
        state: dict = {}
        for key, value in part("opt.").items():
            pid, name = key.split(".", 1)
            state.setdefault(int(pid), {})[name] = value
        for key, value in meta["opt_scalars"].items():
            pid, name = key.split(".", 1)
            state.setdefault(int(pid), {})[name] = value
        self.opt.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
        self.step, self.lines_seen, self.train_seconds = meta["step"], meta["lines_seen"], meta["train_seconds"]
        self.log(f"resumed from {self.state_path}: step {self.step}, {self.lines_seen} lines, "
                 f"{self.train_seconds / 60:.1f} min trained")

    # --- one step ------------------------------------------------------------------------------------------------

    def train_step(self, batches: "LineBatch | list[LineBatch]", lr: float) -> dict[str, float]:
        """One optimizer step over one batch, or over several micro-batches (gradients accumulated, each weighted
        by its share of the lines; micro-batches may have different image widths)."""
        import torch

        micro = batches if isinstance(batches, list) else [batches]
        total = sum(len(b.texts) for b in micro)
        for g in self.opt.param_groups:
            g["lr"] = lr
        self.opt.zero_grad(set_to_none=True)
        sums: dict[str, float] = {}
        for b in micro:
            share = len(b.texts) / total
            loss, parts = self._forward(b)
            (loss * share).backward()
            for k, v in parts.items():
                sums[k] = sums.get(k, 0.0) + v * share
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        return {k: float(v) for k, v in sums.items()} if self.sync_parts else sums

    def _static_prefix(self, H: int, W: int):
        """Prompt ids, token types, text and vision positions for a line width, computed on the host once per
        width and kept on the device."""
        key = (H, W)
        if key not in self._prefix_cache:
            import torch
            from transformers.vision_utils import get_vision_position_ids

            from app.core.training.batches import prefix_ids

            ids, types = prefix_ids(self.tok, H, W)
            ids_t, types_t = torch.tensor([ids]), torch.tensor([types], dtype=torch.int)
            grid = torch.tensor([[1, H // 8, W // 8]])
            # the text model's get_rope_index is device-agnostic; run it on the host copy
            pos, _ = self.model.model.get_rope_index(ids_t, mm_token_type_ids=types_t, image_grid_thw=grid)
            vpos = get_vision_position_ids(grid, self.model.config.vision_config.spatial_merge_size)
            dev = self.device
            first = types.index(1)
            span = (first, first + types.count(1))
            self._prefix_cache[key] = (ids_t.to(dev), types_t.to(dev), pos.to(dev), vpos.to(dev), grid.to(dev), span)
        return self._prefix_cache[key]

    def _to_device(self, t):
        """Host → device without a stream sync on CUDA (pinned memory, non-blocking copy)."""
        return t.pin_memory().to(self.device, non_blocking=True) if self.cuda else t

    def _forward(self, batch: LineBatch):
        import torch
        import torch.nn.functional as F

        from app.core.training import objective as obj
        from app.core.training.batches import encode_texts, patchify_torch

        cfg = self.cfg
        b, H, W = batch.images.shape
        images = self._to_device(torch.from_numpy(batch.images))
        ids, types, pos, vpos, grid, span = self._static_prefix(H, W)
        prefix = obj.Prefix(
            input_ids=ids.expand(b, -1), mm_token_type_ids=types.expand(b, -1), pixel_values=patchify_torch(images),
            image_grid_thw=grid.expand(b, -1), positions=pos.expand(-1, b, -1), vision_positions=vpos,
            image_span=span)
        text_ids = encode_texts(self.tok, batch.texts)
        targets, n = obj.response_targets(text_ids, self.eos, cfg.block_size)
        mask1 = obj.complementary_masks(*targets.shape, cfg.block_size)
        targets, n, mask1 = self._to_device(targets), self._to_device(n), self._to_device(mask1)
        with torch.autocast(self.amp_device, dtype=torch.bfloat16, enabled=self.amp):
            out = obj.joint_forward(self.model, prefix, targets, mask1, mask_id=self.mask_id,
                                    block_size=cfg.block_size)
            loss, parts = obj.joint_loss(self.model, out, targets, n, mask1, block_size=cfg.block_size, lam=cfg.lam)
            total = loss
            if cfg.aux_weight > 0:
                cols = W // 16
                feats = out.image_features.view(b, H // 16, cols, -1)
                width = max(1, max(len(t) for t in text_ids))
                padded = np.zeros((b, width), dtype=np.int64)
                for i, t in enumerate(text_ids):
                    padded[i, :len(t)] = t
                k = batch.columns
                col_ids = np.where(k >= 0, np.take_along_axis(padded, np.clip(k, 0, width - 1), axis=1), -100)
                if (col_ids >= 0).any():
                    tgt = self._to_device(torch.from_numpy(col_ids))[:, None, :].expand(b, H // 16, cols)
                    aux = F.cross_entropy(self.aux_head(feats).float().reshape(-1, len(self.tok)),
                                          tgt.reshape(-1), ignore_index=-100)
                    total = total + cfg.aux_weight * aux
                    parts["aux"] = aux.detach()
        parts["loss"] = loss.detach()
        return total, parts

    # --- the loop ------------------------------------------------------------------------------------------------

    def _batches(self):
        from app.core.training.synthetic import BatchStream, pad_lines

        if self.cfg.fixed_lines:  # one micro-batch per line width: every line is seen at its own width
            groups: dict[int, list] = {}
            for line in self.cfg.fixed_lines:
                groups.setdefault(line.image.shape[1], []).append(line)
            fixed = [pad_lines(g) for g in groups.values()]
            while True:
                yield fixed
        stream = BatchStream(self.cfg.batch_size, seed=self.cfg.seed, workers=self.cfg.workers,
                             max_width=self.cfg.max_width)
        yield from stream.batches(start=self.step)

    def run(self) -> dict[str, Any]:
        cfg = self.cfg
        budget = cfg.minutes * 60 if cfg.minutes else None
        # leave time for the held-out evaluation, the save and the final engine measurements inside the budget
        reserve = (20 if self.cuda else 10) + (60 if cfg.final_eval and not cfg.fixed_lines else 0)
        loop_budget = None if budget is None else max(budget - reserve, budget * 0.5)
        t_start = time.perf_counter()
        base_seconds = self.train_seconds
        last_save = time.perf_counter()
        window_lines, window_t = 0, time.perf_counter()
        log_file = open(self.out / "train_log.jsonl", "a", encoding="utf-8")
        self.log(f"training on {self.device}: preset {cfg.preset}, batch {cfg.batch_size}, block {cfg.block_size}, "
                 f"lr {cfg.lr}, workers {cfg.workers}, budget "
                 f"{'%.1f min' % cfg.minutes if cfg.minutes else '-'} / {cfg.steps or '-'} steps")
        batches = self._batches()
        try:
            while True:
                elapsed = time.perf_counter() - t_start
                if cfg.steps is not None and self.step >= cfg.steps:
                    break
                if loop_budget is not None and elapsed >= loop_budget:
                    break
                progress = max(self.step / cfg.steps if cfg.steps else 0.0,
                               elapsed / loop_budget if loop_budget else 0.0)
                batch = next(batches)
                parts = self.train_step(batch, _lr_at(cfg, self.step, progress))
                self.step += 1
                n_lines = sum(len(b.texts) for b in batch) if isinstance(batch, list) else len(batch.texts)
                self.lines_seen += n_lines
                window_lines += n_lines
                self.train_seconds = base_seconds + (time.perf_counter() - t_start)
                if self.step % cfg.log_every == 0 or self.step == 1:
                    rate = window_lines / max(1e-9, time.perf_counter() - window_t)
                    window_lines, window_t = 0, time.perf_counter()
                    rec = {"step": self.step, "lines": self.lines_seen, "minutes": round(self.train_seconds / 60, 3),
                           "lines_per_s": round(rate, 1), **{k: round(float(v), 4) for k, v in parts.items()}}
                    self.history.append(rec)
                    log_file.write(json.dumps(rec) + "\n")
                    log_file.flush()
                    aux = f"  aux {rec['aux']:.4f}" if "aux" in rec else ""
                    self.log("step {step}  lines {lines}  loss {loss:.4f}  ar {ar:.4f}  diff {diff:.4f}".format(**rec)
                             + aux + f"  lr {_lr_at(cfg, self.step, progress):.2e}  {rec['lines_per_s']:.0f} lines/s")
                if cfg.eval_every_steps and self.step % cfg.eval_every_steps == 0:
                    self.log(f"held-out CER {self.evaluate(limit=min(64, cfg.eval_lines))['cer']:.4f}")
                if time.perf_counter() - last_save > cfg.save_every_minutes * 60:
                    self._save_state()
                    last_save = time.perf_counter()
        finally:
            close = getattr(batches, "close", None)
            if close:
                close()
            log_file.close()
        self._save_state()
        report = self.evaluate() if cfg.eval_lines else {}
        report.update(self.summary())
        report["wall_seconds"] = round(time.perf_counter() - t_start, 1)
        self.save_checkpoint(report)
        self.log(f"checkpoint written to {self.out} (held-out CER {report.get('cer')}); "
                 f"{report['wall_seconds']:.0f} s wall")
        if cfg.final_eval and not cfg.fixed_lines:
            from app.core.training.evaluate import evaluate_checkpoint

            self.log("measuring with the app's engines on CPU (AR vs self-speculative, sample-PDF lines)")
            try:
                report.update(evaluate_checkpoint(self.out, heldout=self.heldout_lines(cfg.final_eval_lines),
                                                  device="cpu", limit=cfg.final_eval_lines, log=self.log))
            except Exception as exc:  # the checkpoint is saved either way
                self.log(f"final evaluation failed: {exc}")
                report["final_eval_error"] = str(exc)
            self.save_checkpoint(report)
        return report

    # --- evaluation and output -----------------------------------------------------------------------------------

    def heldout_lines(self, count: int):
        from app.core.training.synthetic import fonts_list, random_line
        import random

        rng = random.Random(10_000_019 + self.cfg.seed)  # disjoint from the training seeds
        fonts = fonts_list()
        lines = []
        for i in range(count):
            lo, hi = ((1, 12), (8, 30), (24, 56), (48, 80))[i % 4]
            lines.append(random_line(rng, fonts, lo, hi, clean=True, max_width=self.cfg.max_width))
        return lines

    def evaluate(self, limit: int | None = None) -> dict[str, Any]:
        import torch

        from app.core.training.evaluate import cer, read_lines

        lines = self.cfg.fixed_lines or self.heldout_lines(limit or self.cfg.eval_lines)
        budget = max(len(ln.text) for ln in lines) + 8  # a line never needs more; bounds an untrained model's babble
        self.model.eval()
        try:
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.cuda):
                texts = read_lines(self.model, self.tok, [ln.image for ln in lines], device=self.device,
                                   max_new_tokens=budget, exact_width=bool(self.cfg.fixed_lines))
        finally:
            self.model.train()
        refs = [ln.text for ln in lines]
        samples = [{"ref": r, "hyp": h} for r, h in list(zip(refs, texts))[:8]]
        exact = sum(r == h for r, h in zip(refs, texts))
        eval_set = "the training lines (overfit run)" if self.cfg.fixed_lines else "held-out clean rendered lines"
        return {"cer": cer(refs, texts), "exact_lines": exact, "eval_lines": len(lines), "samples": samples,
                "eval_set": eval_set}

    def summary(self) -> dict[str, Any]:
        from app.core.training.model import count_parameters

        last = self.history[-1] if self.history else {}
        return {"steps": self.step, "lines_seen": self.lines_seen, "train_minutes": round(self.train_seconds / 60, 2),
                "device": self.device, "parameters": count_parameters(self.model), "preset": self.cfg.preset,
                "block_size": self.cfg.block_size, "batch_size": self.cfg.batch_size, "lr": self.cfg.lr,
                "final_loss": last.get("loss"), "final_ar": last.get("ar"), "final_diff": last.get("diff")}

    def save_checkpoint(self, report: dict[str, Any]) -> Path:
        from app.core.training.model import save_checkpoint

        self.model.eval()
        extra = {"trained_steps": self.step, "lines_seen": self.lines_seen, "heldout_cer": report.get("cer")}
        path = save_checkpoint(self.model, self.processor, self.out, block_size=self.cfg.block_size, extra=extra,
                               card=model_card(report), dtype=self.cfg.save_dtype)
        self.model.train()
        (self.out / "train_report.json").write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
        return path


def bar_verdict(report: dict[str, Any]) -> str:
    """'met' only when every figure of the shipping bar was measured and passes."""
    if str(report.get("eval_set", "")).startswith("the training lines"):
        return "not applicable: an overfit run, measured on its own training lines; do not ship"
    need = ("cer_app_ar", "pdf_cer", "selfspec_equals_ar")
    if any(k not in report for k in need):
        return "NOT met (not all figures measured): do not ship this model"
    same, total = (int(x) for x in str(report["selfspec_equals_ar"]).split()[0].split("/"))
    ok = report["cer_app_ar"] <= BAR_CER and report["pdf_cer"] <= BAR_PDF_CER and same == total
    return "met" if ok else "NOT met: do not ship this model"


def model_card(report: dict[str, Any]) -> str:
    cer_v = report.get("cer")
    verdict = bar_verdict(report)
    lines = [
        "# Scriptorium built-in line reader",
        "",
        "A tiny `GlmOcrForConditionalGeneration` (character vocabulary, patch 8) trained from scratch on synthetic "
        "printed lines with GravityOCR's joint objective: AR next-token loss on a clean stream plus block-diffusion "
        "loss on two complementary masked streams, so the same weights decode autoregressively and draft blocks for "
        "self-speculative decoding. Produced by `scriptorium train --recipe vision` (README, \"The built-in "
        "model\").",
        "",
        "| measured | value |",
        "|---|---|",
        f"| parameters | {report.get('parameters', 0):,} |",
        f"| preset / block size B | {report.get('preset')} / {report.get('block_size')} |",
        f"| device | {report.get('device')} |",
        f"| steps × batch | {report.get('steps')} × {report.get('batch_size')} |",
        f"| lines seen | {report.get('lines_seen', 0):,} |",
        f"| training time | {report.get('train_minutes')} min |",
        f"| final loss (AR / diffusion) | {report.get('final_ar')} / {report.get('final_diff')} |",
        f"| {report.get('eval_set', 'held-out clean rendered lines')}: CER (AR greedy, batched) | "
        f"{cer_v if cer_v is None else f'{cer_v:.4f}'} "
        f"on {report.get('eval_lines')} lines, {report.get('exact_lines')} exact |",
        f"| reading bar (held-out CER ≤ {BAR_CER:.0%}, sample-PDF lines ≤ {BAR_PDF_CER:.0%}) | "
        f"{verdict} |",
    ]
    for key, title in (("cer_app_ar", "held-out lines: CER with the app's AR engine"),
                       ("pdf_cer", "sample-PDF lines: CER (app AR engine)"), ("pdf_lines", "sample-PDF lines read"),
                       ("tpf", "self-spec tokens per forward"),
                       ("mean_accept", "mean accepted drafts per round"), ("selfspec_equals_ar", "self-spec ≡ AR"),
                       ("ar_seconds", "AR wall time (s)"), ("selfspec_seconds", "self-spec wall time (s)"),
                       ("eval_device", "engines measured on"), ("wall_seconds", "training run wall time (s)")):
        if key in report:
            lines.append(f"| {title} | {report[key]} |")
    if report.get("samples"):
        lines += ["", "Samples (reference → read):", ""]
        lines += [f"- `{s['ref']}` → `{s['hyp']}`" for s in report["samples"]]
    return "\n".join(lines) + "\n"


def train(cfg: TrainConfig, log: Callable[[str], None] = print) -> dict[str, Any]:
    return Trainer(cfg, log).run()


def config_dict(cfg: TrainConfig) -> dict[str, Any]:
    d = asdict(cfg)
    d.pop("fixed_lines", None)
    return d
