"""A toy engine for the registry tests: what adding an engine takes, in one module. It reads a region with the
classic engine's recogniser (real OCR) and writes the text in the letter case its `case` option asks for. Its
`token` option is a secret: the engine only says whether it got one, never what it was."""
from __future__ import annotations

import time
from typing import Any

from app.core.base.cancel import CancelToken
from app.core.engines.base import EngineUnavailable, RegionResult, no_emit
from app.core.record.events import RegionFinished, RegionStarted

CASES = ("upper", "lower")


class ShoutEngine:
    kind = "region"
    device = "cpu"
    input_dpi = 200.0
    concurrency = 1

    def __init__(self, case: str = "upper", token: str = "", name: str = "shout") -> None:
        from app.core.engines.classic import ClassicEngine

        if case not in CASES:
            raise EngineUnavailable(f"case {case!r} is not one of {', '.join(CASES)}")
        self.name, self.case, self.token_given = name, case, bool(token)
        self._reader = ClassicEngine(name=name)

    def close(self) -> None:
        self._reader.close()

    def decode_region(self, image, task: str, *, region_id: str, page: int = 0, emit=no_emit,
                      cancel: CancelToken | None = None) -> RegionResult:
        from app.core.engines.classic import pieces_to_text

        t0 = time.perf_counter()
        emit(RegionStarted(region_id, page, task, self.name))
        text, lines = pieces_to_text("text", self._reader.read_lines(image))
        text = text.upper() if self.case == "upper" else text.lower()
        stats = {"engine": self.name, "lines": lines, "case": self.case, "token_given": self.token_given,
                 "ms": (time.perf_counter() - t0) * 1e3}
        emit(RegionFinished(region_id, text, stats))
        return RegionResult(region_id, text, stats=stats)


def open_engine(*, case: str = "upper", token: str = "", engine: str = "shout", **_model: Any) -> ShoutEngine:
    """The factory the spec names; model options (model_path, device, …) do not apply."""
    return ShoutEngine(case, token, name=engine)
