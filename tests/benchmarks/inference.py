"""Benchmark: the inference path to a real HTTP provider (the test provider on loopback).

1. Gateway overhead. 300 small POSTs to the provider directly with httpx, against the same
   POSTs through the credential gateway (which resolves the key, rewrites the headers and
   relays the answer). The provider and the client each run in a process of their own, as a
   real provider and a component's HTTP client do not share the gateway's interpreter.
   Overhead per request = (gateway - direct) / 300. Goal: under 2 ms.
2. Streaming. One answer of 20,000 SSE deltas sent as fast as the provider can: the built-in
   `openai` driver turning it into text deltas (what the screen receives), against reading the
   same stream's lines with httpx alone. Goal: the driver keeps up with 2,000 deltas a second.

Run: python tests/benchmarks/inference.py   (prints one JSON object)
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.providers.server import Provider, openai_frames  # noqa: E402
from tui.core.cancel import CancelToken  # noqa: E402
from tui.core.inference.credentials import Credentials  # noqa: E402
from tui.core.inference.gateway import CredentialGateway  # noqa: E402
from tui.core.inference.http_driver import HttpDriver  # noqa: E402
from tui.core.inference.retry import RetryPolicy  # noqa: E402
from tui.core.manifest.model import Gateway, Retry  # noqa: E402

REQUESTS = 300
DELTAS = 20_000


def small(handler: Any) -> None:
    handler.status(200, {"id": "x", "choices": []})


def serve() -> None:
    """A provider in a process of its own, answering every request with a small answer."""
    provider = Provider().start()

    class Always(list[Any]):
        def pop(self, index: int = -1) -> Any:
            return small

        def __bool__(self) -> bool:
            return True

    provider.replies = Always()
    print(provider.url, flush=True)
    sys.stdin.read()  # until the benchmark closes the pipe
    provider.stop()


def client(base: str) -> None:
    """POSTs from a process of its own (as a component's HTTP client is not in the
    interpreter running the gateway); prints seconds per request."""
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi" * 200}]})
    with httpx.Client() as http:
        for _ in range(20):  # warm the connection
            http.post(base + "/chat/completions", content=body)
        started = time.perf_counter()
        for _ in range(REQUESTS):
            answer = http.post(base + "/chat/completions", content=body,
                               headers={"content-type": "application/json"})
            assert answer.status_code == 200
        print((time.perf_counter() - started) / REQUESTS)


def gateway_overhead(home: Path) -> dict[str, Any]:
    server = subprocess.Popen([sys.executable, __file__, "--serve"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None and server.stdin is not None
    url = server.stdout.readline().strip()
    (home / "config.yaml").write_text("credentials:\n  BENCH_KEY: sk-bench\n")
    gateway = CredentialGateway("bench", Gateway(endpoint=url + "/v1", api_key="${BENCH_KEY}"),
                                Credentials(home))

    def timed(base: str) -> float:
        out = subprocess.run([sys.executable, __file__, "--client", base], check=True,
                             capture_output=True, text=True)
        return float(out.stdout.strip())

    try:
        direct = statistics.median(timed(url + "/v1") for _ in range(3))
        through = statistics.median(timed(gateway.endpoint) for _ in range(3))
    finally:
        gateway.close()
        server.stdin.close()
        server.wait(timeout=10)
    return {"requests": REQUESTS, "direct_ms": round(direct * 1000, 3),
            "through_gateway_ms": round(through * 1000, 3),
            "gateway_vs_direct_ratio": round(through / direct, 2),
            "overhead_ms": round((through - direct) * 1000, 3)}


class Count:
    def __init__(self) -> None:
        self.deltas = 0

    def text(self, chunk: str) -> None:
        self.deltas += 1

    def thinking(self, chunk: str) -> None:
        self.deltas += 1


def streaming(home: Path) -> dict[str, Any]:
    provider = Provider().start()
    frames = list(openai_frames("x" * DELTAS, pieces=DELTAS))
    reply = lambda h: h.sse(iter(frames))  # noqa: E731
    (home / "config.yaml").write_text("credentials:\n  BENCH_KEY: sk-bench\n")
    driver = HttpDriver("bench", "openai", Gateway(endpoint=provider.url, api_key="${BENCH_KEY}"),
                        Credentials(home), RetryPolicy(Retry()))
    request = {"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "go"}]}], "tools": [],
        "system": "s", "params": {}}
    try:
        def through_driver() -> tuple[float, int]:
            provider.replies = [reply]
            sink = Count()
            started = time.perf_counter()
            answer = driver.complete(request, sink, CancelToken())
            elapsed = time.perf_counter() - started
            assert answer.status == "passed" and sink.deltas == DELTAS
            return elapsed, sink.deltas

        def raw_lines() -> float:
            provider.replies = [reply]
            started = time.perf_counter()
            with httpx.stream("POST", provider.url + "/chat/completions", json={}) as answer:
                count = sum(1 for line in answer.iter_lines() if line.startswith("data:"))
            assert count >= DELTAS
            return time.perf_counter() - started

        through_driver()
        raw_lines()
        driver_s = statistics.median(through_driver()[0] for _ in range(3))
        raw_s = statistics.median(raw_lines() for _ in range(3))
    finally:
        driver.close()
        provider.stop()
    return {"deltas": DELTAS, "driver_s": round(driver_s, 3), "raw_httpx_s": round(raw_s, 3),
            "driver_deltas_per_s": round(DELTAS / driver_s),
            "raw_lines_per_s": round(DELTAS / raw_s),
            "driver_vs_raw_ratio": round(driver_s / raw_s, 2)}


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:
        serve()
        return
    if sys.argv[1:2] == ["--client"]:
        client(sys.argv[2])
        return
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        result: dict[str, Any] = {"benchmark": "inference",
                                  "gateway": gateway_overhead(home),
                                  "streaming": streaming(home)}
    result["goals"] = {
        "gateway_under_2ms": result["gateway"]["overhead_ms"] < 2.0,
        "stream_keeps_up_with_2000_per_s": result["streaming"]["driver_deltas_per_s"] >= 2000,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
