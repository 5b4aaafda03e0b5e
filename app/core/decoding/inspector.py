"""The reject inspector's numbers for one self-speculative round, from the logits the round already computed (no
extra forward): for chosen candidate positions (slots: 0 = a0, 1..B = the drafts), the drafter's and the verifier's
top-k tokens with probabilities, the entropy of each distribution (bits), each model's probability of the drafted
token, and the margin (the verifier's top-1 probability minus its probability of the drafted token: how close the
call was; 0 at an accepted slot).

Which distribution is whose, per slot i of a round whose candidates are [a0, d1..dB]:
- drafter: a0's row (the draft's causal row 0, or the prefill's seed in round 0) for slot 0; mask row of d_i else;
- verifier: a0's row again for slot 0 (a0 is the exact AR token); the verify row before candidate i for i ≥ 1.

Computed only when `InspectOptions` is given (a listener or a trace wants it); then the round makes two more small
device→host reads (top-k ids and probabilities per inspected slot, the new tokens' probabilities).

What must never live here: events, token texts, Qt.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import torch

LOG2 = math.log(2.0)
ENV = "SCRIPTORIUM_INSPECT"  # rejected | around:N | all | off (InspectOptions.from_env)


@dataclass(frozen=True)
class InspectOptions:
    """What the inspector records per round: `top_k` tokens per distribution, the first rejected slot and `around`
    slots either side of it (clipped to the round), or with `all_slots` every candidate slot (accepted ones too)."""

    top_k: int = 5
    around: int = 0
    all_slots: bool = False

    @classmethod
    def from_env(cls, value: str | None = None) -> "InspectOptions | None":
        """The engines' default, from `SCRIPTORIUM_INSPECT` (or `value`): `rejected` (the default: the first
        rejected slot), `around:N` (and N slots either side), `all` (every slot, accepted ones too: what an A/B
        diff wants at its first divergence), `off` (never). An unknown value is the default."""
        import os

        text = (os.environ.get(ENV, "") if value is None else value).strip().lower()
        if text == "off":
            return None
        if text == "all":
            return cls(all_slots=True)
        if text.startswith("around:") and text[7:].isdigit():
            return cls(around=int(text[7:]))
        return cls()

    def slots(self, k: int, width: int) -> list[int]:
        """The slots to inspect in a round of `width` candidates whose first rejected slot is `k` (== width: none)."""
        if self.all_slots:
            return list(range(width))
        if k >= width:
            return []
        return list(range(max(0, k - self.around), min(width, k + self.around + 1)))


def slot_rows(draft_logits: "torch.Tensor | None", verify_logits: "torch.Tensor | None",
              seed: "torch.Tensor | None", slots: Sequence[int]) -> tuple["torch.Tensor", "torch.Tensor"]:
    """(drafter, verifier) logit rows of `slots`, each (len(slots), vocab), picked without copying the rest.
    `draft_logits`: the draft forward's rows ([x0] + masks; masks alone in round 0, where `seed`, the prefill's
    last row, is a0's; None when round 0 ran no draft); `verify_logits`: the verify forward's rows (None when no
    verify ran: slot 0 only)."""
    import torch

    def drafter(i: int) -> "torch.Tensor":
        if seed is not None:
            return seed.view(-1) if i == 0 else draft_logits[i - 1]
        return draft_logits[i]

    def verifier(i: int) -> "torch.Tensor":
        return drafter(0) if i == 0 else verify_logits[i - 1]

    return torch.stack([drafter(i) for i in slots]), torch.stack([verifier(i) for i in slots])


def slot_count(draft_logits, verify_logits, seed) -> int:
    """How many slots a round's logits cover (1 when no verify ran)."""
    if verify_logits is None or draft_logits is None:
        return 1
    return draft_logits.shape[0] + (1 if seed is not None else 0)


def inspect_slots(drafter: "torch.Tensor", verifier: "torch.Tensor", candidates: Sequence[int], slots: Sequence[int],
                  k: int, top_k: int) -> list[dict]:
    """Plain dicts (ids, probabilities, entropies) for `slots`, whose drafter and verifier rows are given (one
    per slot, in order), read from the device in one go."""
    import torch

    if not slots:
        return []
    n = len(slots)
    rows = torch.cat([drafter, verifier]).float()
    logp = torch.log_softmax(rows, -1)
    probs = logp.exp()
    top_p, top_i = probs.topk(min(top_k, probs.shape[-1]), -1)
    entropy = -(probs * logp).nan_to_num().sum(-1) / LOG2
    drafted = torch.tensor([int(candidates[s]) for s in slots] * 2, dtype=torch.long, device=probs.device)
    p_drafted = probs.gather(1, drafted.view(-1, 1)).view(-1)
    ids, ps, ent, pd = top_i.tolist(), top_p.tolist(), entropy.tolist(), p_drafted.tolist()
    out = []
    for j, s in enumerate(slots):
        v = n + j
        out.append(dict(position=int(s), drafted=int(candidates[s]), accepted=s < k,
                        draft_top=ids[j], draft_probs=ps[j], draft_entropy=ent[j], draft_p_drafted=pd[j],
                        verify_top=ids[v], verify_probs=ps[v], verify_entropy=ent[v], verify_p_drafted=pd[v],
                        margin=ps[v][0] - pd[v]))
    return out
