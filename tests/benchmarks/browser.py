"""Benchmark: the conversation browser at any size.

1. A 1,000,000-message record (users, assistants with tool calls, tool results in the
   seed-003 envelope; about 500 bytes a line). The first newest-first page of 50 by the
   backward reader (reading blocks from the end of the file) against the spec reader's
   whole-file parse (`RecordReader(cache=False).read_page`), in the same run. Goals: at least
   100x faster, and under 50 ms. The deepest page (the oldest message) is timed too.
2. The list over 10,000 conversations: the time from starting `murmur-tui browse` (the real
   Textual app, headless, in a new process each time) until the first screenful is on
   screen, against reading every conversation's preview before painting (what a list that
   waits for everything costs before it could start to draw). Goal: under 300 ms.
3. Search as you type, over the same 10,000 conversations: one whole search of every record
   (what each pause in typing starts), and how soon a search that a newer query replaced
   stops reading (what keeps typing from queuing work). Goal: it stops within 10 ms.

Run: python tests/benchmarks/browser.py   (prints one JSON object; `--search` runs part 3 only)
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MESSAGES = 1_000_000
CONVERSATIONS = 10_000
PAGE = 50
REPEAT = 5


def message(n: int) -> dict[str, Any]:
    kind = n % 3
    pad = "lorem ipsum dolor sit amet " * 12
    if kind == 0:
        return {"id": f"msg_{n:032x}", "role": "user",
                "content": [{"type": "text", "text": f"question {n}: {pad}"}]}
    if kind == 1:
        return {"id": f"msg_{n:032x}", "role": "assistant", "content": [
            {"type": "text", "text": f"answer {n}: {pad[:260]}"},
            {"type": "tool_call", "id": f"call_{n}", "name": "bash",
             "input": {"command": f"grep -n needle{n} src/*.py"}}]}
    envelope = {"tool_call_id": f"call_{n - 1}", "is_error": False,
                "content": [{"type": "text", "text": f"src/a.py:{n}: needle {pad[:300]}"}]}
    return {"id": f"msg_{n:032x}", "role": "tool",
            "content": [{"type": "text", "text": json.dumps(envelope)}]}


def build_record(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as out:
        batch: list[str] = []
        for n in range(MESSAGES):
            batch.append(json.dumps(message(n)))
            if len(batch) == 10_000:
                out.write("\n".join(batch) + "\n")
                batch.clear()
        if batch:
            out.write("\n".join(batch) + "\n")
    return path.stat().st_size


def timed(fn: Any, repeat: int = REPEAT) -> tuple[float, Any]:
    times: list[float] = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def first_page(path: Path) -> dict[str, Any]:
    from tui.core.record.backward import BackwardReader
    from tui.core.record.reader import RecordReader

    backward_s, backward = timed(lambda: BackwardReader(path).page(PAGE))
    spec_s, spec = timed(lambda: RecordReader(cache=False).read_page(path, None, PAGE), 2)
    same = [m.message["id"] for m in backward] == [m.id for m in spec.messages]

    with path.open("rb") as handle:  # where the oldest page ends: after line PAGE
        oldest_end = sum(len(handle.readline()) for _ in range(PAGE))

    def deepest() -> Any:
        return BackwardReader(path, end=oldest_end).page(PAGE)

    deepest_s, oldest = timed(deepest)
    return {
        "backward_first_page_ms": round(backward_s * 1000, 2),
        "spec_whole_file_parse_ms": round(spec_s * 1000, 1),
        "first_page_ratio": round(spec_s / backward_s, 1),
        "pages_equal": same,
        "oldest_page_ms": round(deepest_s * 1000, 2),
        "oldest_reached": bool(oldest) and oldest[-1].message["id"] == f"msg_{0:032x}",
    }


def build_conversations(home: Path) -> None:
    root = home / "conversations"
    now = time.time()
    for n in range(CONVERSATIONS):
        folder = root / f"store{n % 7}" / f"ctx-{n:05d}"
        folder.mkdir(parents=True)
        path = folder / "conversation.jsonl"
        lines = [json.dumps(message(3 * k + n % 3)) for k in range(6)]
        lines[0] = json.dumps({"id": f"msg_{n:032x}", "role": "user",
                               "content": [{"type": "text", "text": f"conversation {n}"}]})
        path.write_text("\n".join(lines) + "\n")
        os.utime(path, (now - n, now - n))


async def list_paint(home: Path) -> float:
    from tui.app.browser.app import BrowserApp
    from tui.app.browser.conversations import ConversationsScreen

    app = BrowserApp(home)
    start = time.perf_counter()
    async with app.run_test(size=(160, 50)) as pilot:
        while True:
            screen = app.screen
            if isinstance(screen, ConversationsScreen) and screen.painted_at is not None:
                # painted_at is taken after the refresh that drew the first rows
                painted = screen.painted_at + (screen.started - start)
                assert screen.rows.row_count > 0
                break
            await asyncio.sleep(0.002)
        await pilot.pause()
    return painted


def paint_in_fresh_process(home: Path) -> float:
    """One launch of the browser, as a user starts it: a new process (imports done before the
    clock starts, as they are before the app is built)."""
    out = subprocess.run([sys.executable, __file__, "--paint", str(home)], check=True,
                         capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def everything_first(home: Path) -> float:
    """The other way: scan and read every preview, then the list could paint."""
    from tui.core.record.catalog import read_preview, scan

    start = time.perf_counter()
    for conversation in scan(home):
        conversation.preview = read_preview(conversation)
    return time.perf_counter() - start


def live_search(home: Path) -> dict[str, Any]:
    import threading

    from tui.core.record.catalog import scan, search_all

    conversations = scan(home)
    whole_s, hits = timed(lambda: sum(1 for _ in search_all(conversations, "needle")), 3)
    stops: list[float] = []
    for _ in range(REPEAT):
        replaced: list[float] = []
        ended: list[float] = []

        def search() -> None:
            for _ in search_all(conversations, "needle", lambda: bool(replaced)):  # noqa: B023
                pass
            ended.append(time.perf_counter())  # noqa: B023 - read after join

        worker = threading.Thread(target=search)
        worker.start()
        time.sleep(min(0.05, whole_s / 3))  # mid-search
        replaced.append(time.perf_counter())
        worker.join()
        stops.append(ended[0] - replaced[0])
    return {"conversations": len(conversations), "hits": hits,
            "whole_search_ms": round(whole_s * 1000, 1),
            "replaced_search_stops_ms": round(statistics.median(stops) * 1000, 2),
            "worst_stop_ms": round(max(stops) * 1000, 2)}


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    if sys.argv[1:2] == ["--paint"]:
        print(asyncio.run(list_paint(Path(sys.argv[2]))))
        return
    result: dict[str, Any] = {"benchmark": "browser"}
    if sys.argv[1:2] == ["--search"]:
        with tempfile.TemporaryDirectory() as tmp:
            build_conversations(Path(tmp))
            result["search"] = live_search(Path(tmp))
        result["goals"] = {"replaced_search_stops_under_10ms":
                           result["search"]["worst_stop_ms"] < 10}
        print(json.dumps(result))
        return
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = home / "big" / "conversation.jsonl"
        start = time.perf_counter()
        size = build_record(path)
        result["record"] = {"messages": MESSAGES, "bytes": size,
                            "bytes_per_line": round(size / MESSAGES),
                            "build_s": round(time.perf_counter() - start, 1)}
        result["record"].update(first_page(path))
        path.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        build_conversations(home)
        everything_first(home)  # warm the page cache for both ways alike
        paints = [paint_in_fresh_process(home) for _ in range(5)]
        waits = [everything_first(home) for _ in range(3)]
        paint = statistics.median(paints)
        wait = statistics.median(waits)
        result["list"] = {"conversations": CONVERSATIONS,
                          "first_paint_ms": round(paint * 1000, 1),
                          "read_everything_first_ms": round(wait * 1000, 1),
                          "ratio": round(wait / paint, 2)}
        result["search"] = live_search(home)
    record = result["record"]
    result["goals"] = {
        "first_page_100x": record["first_page_ratio"] >= 100,
        "first_page_under_50ms": record["backward_first_page_ms"] < 50,
        "list_paint_under_300ms": result["list"]["first_paint_ms"] < 300,
        "replaced_search_stops_under_10ms": result["search"]["worst_stop_ms"] < 10,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
