"""Benchmark: what a tool's image attachments cost the host in memory.

A headless session (`python -m tui launch … --headless`, a subprocess whose peak RSS
`os.wait4` reports) in which a tool (tests/wasm/fixtures/path_tool.wasm) attaches one image
per call, four calls, each image 5 MiB — against the same session attaching four 1 KiB
images. Two kinds of bytes: random (as a compressed PNG's are) and uniform (whose base64 is
one long run of letters, the hardest text for the token counter). Growth = peak(5 MiB) −
peak(1 KiB); ratio = growth / the 20 MiB attached. Goal: growth under 64 MiB (it was ~150 MiB
for random bytes and ~390 MiB for uniform ones while every image stayed in memory as base64
and its base64 was counted whole).

Run: python tests/benchmarks/attachments.py   (prints one JSON object)

`attaching_capsule` is also what tests/wasm/test_attachment_memory.py measures with.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.benchmarks.hostile import FIXTURES, session_peak_rss  # noqa: E402
from tests.capsules import write_capsule  # noqa: E402
from tests.responses import call_response, text_response  # noqa: E402

MIB = 1 << 20
IMAGES = 4
GOAL_GROWTH_MIB = 64


def attaching_capsule(root: Path, sizes: list[int], uniform: bool) -> Path:
    """A capsule whose scripted model has the tool attach `img<n>.png` of each size in turn
    (one call each), then answers "done"; the images are in `root/work` (give it as
    --workdir)."""
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    steps: list[dict[str, Any]] = []
    for index, size in enumerate(sizes):
        name = f"img{index}.png"
        body = bytes([index]) * (size - 8) if uniform else os.urandom(size - 8)
        (work / name).write_bytes(b"\x89PNG\r\n\x1a\n" + body)
        steps.append(call_response("t", {"q": f"attach={name}"}, f"c{index}"))
    steps.append(text_response("done"))
    return write_capsule(root, steps, name="attaching", model="m", max_turns=20, shell=(),
                         tools={"t": FIXTURES / "path_tool.wasm"},
                         extra=f"context:\n  images:\n    max_bytes: {max(sizes) + MIB}\n")


def peak_mib(scratch: Path, label: str, size: int, uniform: bool) -> tuple[float, float]:
    root = attaching_capsule(scratch / label, [size] * IMAGES, uniform)
    started = time.monotonic()
    peak, code, stdout = session_peak_rss(root, scratch / f"home-{label}", "--workdir",
                                          str(root / "work"))
    if code != 0 or f"{IMAGES} tool calls" not in stdout:
        raise SystemExit(f"the {label} session failed ({code}):\n{stdout[-2000:]}")
    return peak / MIB, time.monotonic() - started


def main() -> None:
    report: dict[str, Any] = {"benchmark": "attachments", "images": IMAGES,
                              "image_mib": 5, "goal_growth_mib": GOAL_GROWTH_MIB}
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        for kind, uniform in (("random", False), ("uniform", True)):
            small, _ = peak_mib(scratch, f"{kind}-1KiB", 1024, uniform)
            large, seconds = peak_mib(scratch, f"{kind}-5MiB", 5 * MIB, uniform)
            growth = large - small
            report[kind] = {"peak_rss_1KiB_mib": round(small, 1),
                            "peak_rss_5MiB_mib": round(large, 1),
                            "growth_mib": round(growth, 1),
                            "ratio_growth_to_attached": round(growth / (IMAGES * 5), 2),
                            "session_s": round(seconds, 1),
                            "meets_goal": growth < GOAL_GROWTH_MIB}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
