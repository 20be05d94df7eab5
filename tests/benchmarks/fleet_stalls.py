"""For the fleet benchmark (tests/benchmarks/fleet.py): what the event loop was doing when it
stalled (a sampling thread), and the old behaviour switched back on for the comparison."""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Any

from rich.cells import cell_len, set_cell_size
from textual.app import App
from textual.geometry import Size
from textual.visual import VisualType
from textual.widgets import Static

from tui.app import gc_policy
from tui.app.widgets.row_list import Row, RowList
from tui.app.widgets.scrolling import resize_content
from tui.app.widgets.steady_text import SteadyText
from tui.core.text.printable import printable

STALL_S = 0.04  # a gap between two 10 ms ticks longer than this is a stall
SAMPLE_S = 0.002


def frames(frame: FrameType | None) -> list[str]:
    out: list[str] = []
    while frame is not None:
        code = frame.f_code
        path = code.co_filename
        short = "/".join(path.split("/")[-2:])
        out.append(f"{short}:{code.co_name}")
        frame = frame.f_back
    return out


class Stalls:
    """Samples the loop thread's stack every 2 ms; a gap between ticks longer than STALL_S is a
    stall, reported with the frames seen in most of its samples (innermost first)."""

    def __init__(self) -> None:
        self.samples: deque[tuple[float, list[str]]] = deque(maxlen=200_000)
        self.ticks: list[float] = []
        self._stop = threading.Event()
        self._loop_thread = threading.get_ident()

    def start(self, app: App[Any]) -> None:
        self._loop_thread = threading.get_ident()
        app.set_interval(0.01, lambda: self.ticks.append(time.perf_counter()))
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            frame = sys._current_frames().get(self._loop_thread)
            self.samples.append((time.perf_counter(), frames(frame)))

    def stop(self, worst: int = 6) -> list[dict[str, Any]]:
        self._stop.set()
        gaps = sorted(((b - a, a, b) for a, b in zip(self.ticks, self.ticks[1:], strict=False)
                       if b - a > STALL_S), reverse=True)[:worst]
        out = []
        for length, begin, end in gaps:
            inside = [stack for at, stack in self.samples if begin <= at <= end]
            seen: Counter[str] = Counter()
            for stack in inside:
                seen.update(set(stack))
            common = [f"{name} {count * 100 // max(len(inside), 1)}%"
                      for name, count in seen.most_common(40)
                      if "asyncio" not in name and "_run_once" not in name][:14]
            out.append({"ms": round(length * 1000, 1), "samples": len(inside), "in": common})
        return out


def old_fit(cell: str, width: int) -> str:
    """`fit_cell` as it was: every cell measured in terminal cells."""
    if width <= 0:
        return ""
    shown = printable(cell[:width + 1] if cell.isascii() else cell[:4 * width + 4],
                      keep_newlines=False)
    if cell_len(shown) <= width:
        return set_cell_size(shown, width)
    cut = set_cell_size(shown, width - 1)
    if not shown.startswith(cut):
        cut = cut.rstrip()
    return set_cell_size(cut + "…", width)


def old_replace(self: RowList, rows: Sequence[Row], keep: str | None = None) -> None:
    """`RowList.replace` as it was: every strip dropped, the whole list repainted."""
    self.rows = deque(rows[-self.max_rows:])
    self.index = {row.key: row for row in self.rows}
    self._strips.clear()
    self.cursor = None
    self.hover = None
    if keep is not None and keep in self.index:
        self.cursor = next(i for i, row in enumerate(self.rows) if row.key == keep)
    elif self.rows:
        self.cursor = 0
    resize_content(self, Size(self._width(), len(self.rows)))
    self.refresh()


def old_update(self: SteadyText, content: VisualType = "", *, layout: bool | None = None) -> None:
    """`Static.update` as the fleet called it: the screen laid out at every update."""
    Static.update(self, content, layout=True)


@contextmanager
def old_behaviour(on: bool) -> Iterator[None]:
    """`on`: the fleet as it drew and collected before the changes of docs/benchmarks.md —
    `RowList.replace` repainting every row and fitting every cell, the totals and detail
    lines laying the screen out at each redraw, full collections never freezing their
    survivors (nor the fleet its newly watched sessions)."""
    if not on:
        yield
        return
    saved = (RowList.replace, RowList._fit, SteadyText.update, gc_policy.FREEZE_ABOVE_SECONDS,
             gc_policy.GcPolicy.settle)
    RowList.replace = old_replace  # type: ignore[method-assign]
    gc_policy.GcPolicy.settle = lambda self: None  # type: ignore[method-assign]
    RowList._fit = lambda self, cell, width: old_fit(cell, width)  # type: ignore[method-assign]
    SteadyText.update = old_update  # type: ignore[method-assign]
    gc_policy.FREEZE_ABOVE_SECONDS = float("inf")
    try:
        yield
    finally:
        RowList.replace, RowList._fit, SteadyText.update = saved[:3]  # type: ignore[method-assign]
        gc_policy.FREEZE_ABOVE_SECONDS = saved[3]
        gc_policy.GcPolicy.settle = saved[4]  # type: ignore[method-assign]
