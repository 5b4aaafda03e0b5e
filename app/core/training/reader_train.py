"""Training the built-in reader on CPU: features → joint AR + block-diffusion objective → checkpoint + model card.

    1. features: render training lines (training fonts and texts only) and read them with the recogniser, cached
       in <work>/features (resumable shards, `linedata.extract`); the held-out set likewise in <work>/heldout;
    2. train: the joint objective (objective.joint_forward_embeds: clean stream + two complementary corrupted
       streams over [prefix | response]) on length-bucketed batches of the cached lines, a few synthetic prefix
       corruptions per batch (substituted, dropped or doubled characters with low confidence) so the decoder
       learns to correct, not only to copy; AdamW, warm-up then cosine decay over the time budget; seeded;
       the state (model, optimiser, data position) saved every few minutes as safetensors + JSON (resume);
    3. evaluate: the app's own decoders (autoregressive.ar_decode, selfspec.selfspec_decode) on the held-out lines
       (fonts and texts never trained on): CER of the model and of the recogniser's greedy reading, exact lines,
       TPF, mean accepted draft length, self-spec == AR, tokens/s;
    4. write the checkpoint (reader.save_reader) and MODEL_CARD.md with those figures.
"""
from __future__ import annotations

import json
import math
import os
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from app.core.text.textmetrics import errors as cer  # noqa: F401 - (edit distance, len(ref)), summed into a corpus CER
from app.core.training.reader_card import BAR_CER, BAR_TPF, model_card, verdict  # noqa: F401 - re-exported


@dataclass
class ReaderConfig:
    out: str
    work: str = "runs/builtin"
    lines: int = 20000  # training lines to extract (features)
    heldout_lines: int = 400
    minutes: float = 60.0  # training time (features and evaluation excluded)
    steps: int | None = None
    batch_size: int = 32
    lr: float = 1e-3
    min_lr_ratio: float = 0.05
    warmup_steps: int = 100
    weight_decay: float = 0.01
    preset: str = "small"
    block_size: int = 16
    lam: float = 1.0
    corrupt: float = 0.15  # share of lines with synthetic prefix corruptions
    seed: int = 0
    threads: int = 2
    workers: int = 2
    resume: bool = False
    save_every_minutes: float = 3.0
    eval_every_minutes: float = 10.0
    eval_lines: int = 60  # periodic evaluation (the final one uses all held-out lines)
    log_every: int = 25
    final_eval: bool = True
    wait_for_features: bool = False  # train on the shards present, picking up new ones each epoch
    version: int = 2  # 2: every recogniser character, top-3 evidence; 1: the first 300-character model
    init: str | None = None  # warm start from this checkpoint folder (a first-version model, same preset)
    negatives: int = 1024  # random rows in each step's sampled softmax (vocabularies over 4,096 rows)
    synthetic: int = 0  # lines whose prefix is their own text (no image; texts.synthetic_readings), added to the data


class Data:
    """The cached lines as (prefix rows (P, 4), text ids) pairs, in length-bucketed, seeded batches."""

    def __init__(self, codec, paths, max_text: int = 110, synthetic: list | None = None) -> None:
        from app.core.training.linedata import load_shards
        from app.core.rapid.recogniser import Reading

        self.codec = codec
        self.items: list[tuple[np.ndarray, list[int], str, str]] = []
        self.recogniser_errors = [0, 0]
        for row in load_shards(paths):
            text = row["text"]
            if not text or len(text) > max_text:
                continue
            reading = Reading.from_json(row["reading"])
            rows = np.array(codec.rows(reading), dtype=np.int64).reshape(-1, codec.width)
            self.items.append((rows, codec.encode_text(text), text, reading.text))
        self.rendered = len(self.items)
        for text, reading in synthetic or []:
            rows = np.array(codec.rows(reading), dtype=np.int64).reshape(-1, codec.width)
            self.items.append((rows, codec.encode_text(text), text, reading.text))
        self.shards = len(paths)

    def batches(self, epoch: int, batch_size: int, seed: int) -> list[list[int]]:
        rng = random.Random(seed * 7919 + epoch)
        order = list(range(len(self.items)))
        rng.shuffle(order)
        chunk = batch_size * 50
        out = []
        for s in range(0, len(order), chunk):
            part = sorted(order[s:s + chunk], key=lambda i: len(self.items[i][1]))
            out += [part[k:k + batch_size] for k in range(0, len(part), batch_size)]
        rng.shuffle(out)
        return out


def corrupt_rows(rows: np.ndarray, codec, rng: random.Random) -> np.ndarray:
    """1-2 synthetic recogniser slips with low confidence: a substituted (the true character as its alternative),
    dropped or doubled character."""
    rows = rows.copy()
    chars = sorted(codec.char.values())
    inv = {v: k for k, v in codec.char.items()}
    for _ in range(rng.randint(1, 2)):
        if len(rows) == 0:
            break
        i = rng.randrange(len(rows))
        kind = rng.random()
        low = codec.conf[rng.choice((0, 0, 1, 1, 2))]
        if kind < 0.6:
            true = int(rows[i, 0])
            # a confusable: mostly a character of the same kind (a CJK character for a CJK one)
            rows[i, 0] = rng.choice(chars) if true < 0 or rng.random() < 0.5 else rng.choice(
                chars[max(0, true - 200):true + 200] or chars)
            rows[i, 1] = low
            if rng.random() < 0.6:
                rows[i, 2:4] = codec.alt_cols(inv.get(true, ""), rng.choice((1, 2, 3)), 0)
        elif kind < 0.8 and len(rows) > 1:
            rows = np.delete(rows, i, axis=0)
        else:
            dup = rows[i].copy()
            dup[1] = low
            rows = np.insert(rows, i, dup, axis=0)
    return rows


class ReaderTrainer:
    def __init__(self, cfg: ReaderConfig, log: Callable[[str], None] = print) -> None:
        import torch

        from app.core.engines.builtin.reader import PrefixCodec, build_reader, count_parameters

        self.cfg, self.log = cfg, log
        torch.set_num_threads(max(1, cfg.threads))
        self.out = Path(cfg.out)
        self.work = Path(cfg.work)
        self.model, self.tok = build_reader(cfg.preset, seed=cfg.seed, version=cfg.version)
        if cfg.init and not (cfg.resume and (self.work / "state" / "state.json").is_file()):
            from app.core.training.warm_start import warm_start

            self.warm = warm_start(self.model, self.tok, cfg.init, seed=cfg.seed, log=log)
        self.model.train()
        self.codec = PrefixCodec(self.tok)
        from app.core.engines.builtin.vocab import CHARSET
        from app.core.training.warm_start import fixed_classes

        self.fixed = fixed_classes(self.tok, len(CHARSET))
        self.params = count_parameters(self.model)
        decay = [p for n, p in self.model.named_parameters() if p.ndim >= 2 and "embed" not in n]
        no_decay = [p for n, p in self.model.named_parameters() if not (p.ndim >= 2 and "embed" not in n)]
        self.opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                      {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=(0.9, 0.98))
        self.step = 0
        self.epoch = 0
        self.batch_in_epoch = 0
        self.lines_seen = 0
        self.train_seconds = 0.0
        self.history: list[dict[str, Any]] = []
        self.state_dir = self.work / "state"
        self.rng = random.Random(cfg.seed)
        if cfg.resume and (self.state_dir / "state.json").is_file():
            self._load_state()
        elif cfg.resume:
            log(f"nothing to resume in {self.state_dir}; starting a new run")

    # --- state ---------------------------------------------------------------------------------------------------

    def _save_state(self) -> None:
        from safetensors.torch import save_file

        tensors = {"model." + k: v.detach().clone().contiguous() for k, v in self.model.state_dict().items()}
        opt = self.opt.state_dict()
        scalars: dict[str, Any] = {}
        for pid, slots in opt["state"].items():
            for name, value in slots.items():
                if hasattr(value, "detach"):
                    tensors[f"opt.{pid}.{name}"] = value.detach().clone().contiguous()
                else:
                    scalars[f"{pid}.{name}"] = value
        meta = {"param_groups": opt["param_groups"], "opt_scalars": scalars, "step": self.step, "epoch": self.epoch,
                "batch_in_epoch": self.batch_in_epoch, "lines_seen": self.lines_seen,
                "train_seconds": self.train_seconds, "preset": self.cfg.preset, "block_size": self.cfg.block_size,
                "seed": self.cfg.seed, "history": self.history, "version": self.cfg.version, "rng": self.rng.getstate()[1][:1]}
        self.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.state_dir / "state.safetensors.tmp"
        save_file(tensors, str(tmp))
        os.replace(tmp, self.state_dir / "state.safetensors")
        (self.state_dir / "state.json.tmp").write_text(json.dumps(meta), encoding="utf-8")
        os.replace(self.state_dir / "state.json.tmp", self.state_dir / "state.json")

    def _load_state(self) -> None:
        from safetensors.torch import load_file

        meta = json.loads((self.state_dir / "state.json").read_text(encoding="utf-8"))
        if meta.get("version", 1) != self.cfg.version:
            raise ValueError(f"{self.state_dir} holds a run of model version {meta.get('version', 1)}; pass the same "
                             f"--version to resume")
        if meta["preset"] != self.cfg.preset or meta["block_size"] != self.cfg.block_size:
            raise ValueError(f"{self.state_dir} holds a run with preset {meta['preset']!r} and block size "
                             f"{meta['block_size']}; pass the same --preset/--block-size to resume")
        tensors = load_file(str(self.state_dir / "state.safetensors"))
        self.model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
        state: dict = {}
        for key, value in tensors.items():
            if key.startswith("opt."):
                pid, name = key[4:].split(".", 1)
                state.setdefault(int(pid), {})[name] = value
        for key, value in meta["opt_scalars"].items():
            pid, name = key.split(".", 1)
            state.setdefault(int(pid), {})[name] = value
        self.opt.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
        for k in ("step", "epoch", "batch_in_epoch", "lines_seen", "train_seconds", "history"):
            setattr(self, k, meta[k])
        self.rng = random.Random(self.cfg.seed * 100_003 + self.step)
        self.log(f"resumed from {self.state_dir}: step {self.step}, epoch {self.epoch}, "
                 f"{self.train_seconds / 60:.1f} min trained")

    # --- data ----------------------------------------------------------------------------------------------------

    def features(self) -> list[Path]:
        from app.core.training.linedata import SHARD, extract, shard_path

        folder = self.work / "features"
        size = min(SHARD, self.cfg.lines)
        if self.cfg.wait_for_features:
            n = -(-self.cfg.lines // size)
            return [shard_path(folder, i) for i in range(n) if shard_path(folder, i).exists()]
        return extract(folder, self.cfg.lines, seed=self.cfg.seed, workers=self.cfg.workers, threads=1, size=size,
                       log=self.log)

    def heldout(self) -> list[dict]:
        from app.core.training.linedata import extract, load_shards

        paths = extract(self.work / "heldout", self.cfg.heldout_lines, seed=self.cfg.seed, workers=1,
                        threads=self.cfg.threads, held_out=True, size=min(200, self.cfg.heldout_lines), log=self.log)
        return list(load_shards(paths))

    def collate(self, items, corrupt: bool):
        import torch

        from app.core.training.objective import complementary_masks, response_targets

        rows_list, texts = [], []
        for rows, text_ids, *_ in items:
            if corrupt and self.rng.random() < self.cfg.corrupt:
                rows = corrupt_rows(rows, self.codec, self.rng)
            rows_list.append(rows)
            texts.append(text_ids)
        P = max(len(r) for r in rows_list)
        b = len(items)
        rows = torch.full((b, P, self.codec.width), -1, dtype=torch.long)
        for i, r in enumerate(rows_list):
            if len(r):
                rows[i, P - len(r):] = torch.from_numpy(np.asarray(r, dtype=np.int64))
        targets, n = response_targets(texts, self.codec.eos, self.cfg.block_size)
        g = torch.Generator().manual_seed(self.cfg.seed * 1_000_003 + self.step)
        mask1 = complementary_masks(b, targets.shape[1], self.cfg.block_size, generator=g)
        return rows, targets, n, mask1

    def loss(self, rows, targets, n, mask1):
        import torch

        from app.core.training.objective import joint_forward_embeds, joint_loss
        from app.core.engines.builtin.reader import RESPONSE_START, prefix_embeddings, prefix_positions

        b, P = rows.shape[:2]
        valid = torch.cat([rows[..., 0] >= 0, torch.ones(b, 1, dtype=torch.bool)], dim=1)  # + SEP
        embeds = prefix_embeddings(self.model, rows, self.codec.sep)
        pos = prefix_positions(valid).expand(3, -1, -1)
        out = joint_forward_embeds(self.model, embeds, pos, targets, mask1, mask_id=self.codec.mask,
                                   block_size=self.cfg.block_size, prefix_valid=valid, response_start=RESPONSE_START)
        classes = None
        vocab = self.model.get_input_embeddings().weight.shape[0]
        if vocab > 4096:
            from app.core.training.warm_start import candidate_classes

            g = torch.Generator().manual_seed(self.cfg.seed * 7_000_003 + self.step)
            classes = candidate_classes(self.fixed, targets, rows, vocab, self.cfg.negatives, g)
        return joint_loss(self.model, out, targets, n, mask1, block_size=self.cfg.block_size, lam=self.cfg.lam,
                          classes=classes)

    # --- loop ----------------------------------------------------------------------------------------------------

    def lr_at(self, progress: float) -> float:
        cfg = self.cfg
        if self.step < cfg.warmup_steps:
            return cfg.lr * (self.step + 1) / cfg.warmup_steps
        cos = 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
        return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * cos)

    def progress(self) -> float:
        p = self.train_seconds / 60 / self.cfg.minutes if self.cfg.minutes else 0.0
        if self.cfg.steps:
            p = max(p, self.step / self.cfg.steps)
        return p

    def run(self) -> dict[str, Any]:
        import torch

        t_all = time.perf_counter()
        paths = self.features()
        synthetic = None
        if self.cfg.synthetic:
            from app.core.training.texts import synthetic_readings

            chars = "".join(ch for ch in self.codec.char if ch != "\n")
            synthetic = synthetic_readings(self.cfg.synthetic, self.cfg.seed, chars)
        data = Data(self.codec, paths, synthetic=synthetic)
        self.log(f"data: {len(data.items)} lines ({data.rendered} rendered) from {data.shards} shards; "
                 f"model: {self.params / 1e6:.2f}M "
                 f"parameters, block {self.cfg.block_size}, batch {self.cfg.batch_size}")
        heldout: list[dict] | None = None  # made when first needed (another process may be making it meanwhile)
        last_save = last_eval = time.perf_counter()
        window: list[float] = []
        lines_window = 0
        t_window = time.perf_counter()
        while self.progress() < 1.0:
            batches = data.batches(self.epoch, self.cfg.batch_size, self.cfg.seed)
            while self.batch_in_epoch < len(batches) and self.progress() < 1.0:
                t0 = time.perf_counter()
                idx = batches[self.batch_in_epoch]
                rows, targets, n, mask1 = self.collate([data.items[i] for i in idx], corrupt=True)
                lr = self.lr_at(self.progress())
                for group in self.opt.param_groups:
                    group["lr"] = lr
                loss, parts = self.loss(rows, targets, n, mask1)
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                self.opt.step()
                self.step += 1
                self.batch_in_epoch += 1
                self.lines_seen += len(idx)
                lines_window += len(idx)
                self.train_seconds += time.perf_counter() - t0
                window.append(float(loss.detach()))
                if self.step % self.cfg.log_every == 0:
                    rate = lines_window / max(1e-9, time.perf_counter() - t_window)
                    rec = {"step": self.step, "epoch": self.epoch, "loss": round(float(np.mean(window)), 4),
                           "ar": round(float(parts["ar"]), 4), "diff": round(float(parts["diff"]), 4),
                           "lr": round(lr, 6), "lines_per_s": round(rate, 1),
                           "train_min": round(self.train_seconds / 60, 2)}
                    self.log(json.dumps(rec))
                    self.history.append(rec)
                    window, lines_window, t_window = [], 0, time.perf_counter()
                if self.cfg.steps and self.step >= self.cfg.steps:
                    break
                now = time.perf_counter()
                if now - last_eval >= self.cfg.eval_every_minutes * 60:
                    heldout = heldout if heldout is not None else self.heldout()
                    ev = self.evaluate(heldout[: self.cfg.eval_lines], selfspec_check=False)
                    self.log("eval: " + json.dumps({k: ev[k] for k in ("cer", "rec_cer", "exact", "tpf",
                                                                       "mean_accepted")}))
                    self.history.append({"step": self.step, "eval": {k: ev[k] for k in ("cer", "rec_cer", "tpf")}})
                    last_eval = time.perf_counter()
                if now - last_save >= self.cfg.save_every_minutes * 60:
                    self._save_state()
                    self.save_checkpoint(None)
                    last_save = time.perf_counter()
            if self.cfg.steps and self.step >= self.cfg.steps:
                break
            if self.batch_in_epoch >= len(batches):
                self.epoch += 1
                self.batch_in_epoch = 0
                if self.cfg.wait_for_features:
                    new = self.features()
                    if len(new) > data.shards:
                        data = Data(self.codec, new, synthetic=synthetic)
                        self.log(f"data: {len(data.items)} lines from {data.shards} shards")
        self._save_state()
        report: dict[str, Any] = {
            "steps": self.step, "epochs": round(self.epoch + self.batch_in_epoch / max(1, len(batches)), 2),
            "lines_seen": self.lines_seen, "train_minutes": round(self.train_seconds / 60, 1),
            "training_lines": len(data.items), "rendered_lines": data.rendered, "synthetic_lines": self.cfg.synthetic,
            "params": self.params, "block_size": self.cfg.block_size,
            "preset": self.cfg.preset, "seed": self.cfg.seed, "threads": self.cfg.threads,
            "version": self.cfg.version, "init": self.cfg.init, "warm_start": getattr(self, "warm", None),
        }
        if self.cfg.final_eval:
            heldout = heldout if heldout is not None else self.heldout()
            report["eval"] = self.evaluate(heldout, selfspec_check=True)
        report["wall_minutes"] = round((time.perf_counter() - t_all) / 60, 1)
        self.save_checkpoint(report)
        return report

    # --- evaluation ----------------------------------------------------------------------------------------------

    def evaluate(self, rows: list[dict], *, selfspec_check: bool) -> dict[str, Any]:
        """The app's decoders on held-out lines (self-spec always; AR too when `selfspec_check`), one thread."""
        from app.core.engines.builtin.reader import one_thread

        self.model.eval()
        with one_thread():
            out = self._evaluate(rows, selfspec_check=selfspec_check)
        self.model.train()
        return out

    def _evaluate(self, rows: list[dict], *, selfspec_check: bool) -> dict[str, Any]:
        from app.core.training.reader_eval import evaluate_lines

        return evaluate_lines(self.model, self.tok, self.codec, rows, block_size=self.cfg.block_size,
                              selfspec_check=selfspec_check)

    # --- checkpoint ----------------------------------------------------------------------------------------------

    def save_checkpoint(self, report: dict[str, Any] | None) -> Path:
        from app.core.engines.builtin.reader import save_reader

        target = self.out if report is not None else self.work / "latest"
        card = model_card(report, self.cfg, self.params) if report is not None else None
        save_reader(self.model, self.tok, target, block_size=self.cfg.block_size,
                    extra={"trained_steps": self.step}, card=card)
        if report is not None:
            (target / "train_report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
        return target


def train_reader(cfg: ReaderConfig, log: Callable[[str], None] = print) -> dict[str, Any]:
    t0 = time.perf_counter()
    report = ReaderTrainer(cfg, log).run()
    log(f"wall time: {(time.perf_counter() - t0) / 60:.1f} min")
    return report


def config_dict(cfg: ReaderConfig) -> dict[str, Any]:
    return asdict(cfg)
