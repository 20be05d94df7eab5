"""One wasmtime engine per process, its epoch clock, its compile cache and its linkers.

The engine has epoch interruption on (the cheap wall-clock guard): a thread advances the epoch
every `TICK_SECONDS`, and every store gets a deadline in ticks before each call. Compiled code is
cached in `$MURMUR_HOME/cache/compiled/` (see `cache.py`).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from pathlib import Path

import wasmtime
from wasmtime.component import Linker

from tui.core.wasm import conversion
from tui.core.wasm.cache import CompileCache, LoadedComponent
from tui.core.wasm.imports import define_murmur_imports

TICK_SECONDS = 0.01
ENGINE_FLAGS = "epoch_interruption=1"


class WasmRuntime:
    """The shared engine. Thread-safe: stores made from it may run on any thread."""

    def __init__(self, cache_dir: Path, progress: Callable[[str], None] | None = None) -> None:
        conversion.install()
        config = wasmtime.Config()
        config.epoch_interruption = True
        self.engine = wasmtime.Engine(config)
        self.cache = CompileCache(self.engine, cache_dir, ENGINE_FLAGS, progress)
        self._linkers: dict[bool, Linker] = {}
        self._linker_lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="wasm-epoch", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(TICK_SECONDS):
            self.engine.increment_epoch()

    @staticmethod
    def ticks(seconds: float) -> int:
        """A deadline in epoch ticks (at least one)."""
        return max(1, math.ceil(seconds / TICK_SECONDS))

    def interrupt_all(self, max_seconds: float) -> None:
        """Trip the deadline of every running component (cancel): advance the epoch past any
        deadline up to `max_seconds` away."""
        for _ in range(self.ticks(max_seconds) + 1):
            self.engine.increment_epoch()

    def load(self, wasm_path: Path) -> LoadedComponent:
        return self.cache.load(wasm_path)

    def linker(self, http: bool = False) -> Linker:
        """WASI preview 2 and the murmur host imports (plus wasi:http for drivers)."""
        with self._linker_lock:
            linker = self._linkers.get(http)
            if linker is None:
                linker = Linker(self.engine)
                linker.add_wasip2()
                if http:
                    linker.add_wasi_http()
                define_murmur_imports(linker)
                self._linkers[http] = linker
            return linker

    def close(self) -> None:
        self._stop.set()
