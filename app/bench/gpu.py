"""`python -m app bench gpu`: the decoder benches a GPU machine should run, in one command (none ran in the
session that wrote them: no GPU was available).

1. `bench paths --device cuda`: real GLM-OCR decoder dimensions, random bf16 weights: dynamic eager vs static eager
   vs static compiled (CUDA graphs) for AR, self-spec (oracle drafts, B = 8 and 32) and batched AR.
2. `bench selfspec --device cuda`: decoding table, cost table at the decode's context (tiny model and real
   dimensions, 16 layers, fp32 and bf16) and the overhead-ratio line.
3. `bench batch --device cuda`: batched regions vs one at a time.
Extra arguments go to `bench paths` (e.g. `--layers 4` for a smaller card). Refuses with exit 2 where torch sees no
CUDA device.
"""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    import torch

    if not torch.cuda.is_available():
        print("bench gpu: torch sees no CUDA device here; run it on a GPU machine "
              "(`python -m app bench paths` runs the same paths on this machine's CPU)", file=sys.stderr)
        return 2
    from app.bench import batch, paths, selfspec

    print(f"GPU: {torch.cuda.get_device_name(0)}, torch {torch.__version__}", flush=True)
    code = paths.main(["--device", "cuda", *argv])
    code |= selfspec.main(["--device", "cuda", "--blocks", "4", "8", "32"])
    code |= batch.main(["--device", "cuda"])
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
