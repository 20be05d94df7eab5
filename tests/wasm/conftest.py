"""Capsules built around the committed WAT fixtures (tests/wasm/fixtures/*.wasm)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.capsules import FIXTURES, write_capsule

WasmCapsule = Callable[..., Path]


def fixture(name: str) -> Path:
    return FIXTURES / f"{name}.wasm"


@pytest.fixture
def wasm_capsule(tmp_path: Path) -> WasmCapsule:
    """A capsule with a scripted driver (unless `driver` is given) and WebAssembly entries.

    `artifacts` is YAML text of extra `artifacts:` items (each `  - name: …`);
    `{fixtures}` in it expands to the fixtures folder.
    """

    def make(responses: list[dict[str, Any]] | None, artifacts: str, *, extra: str = "",
             driver: str | None = None, folder: str = "capsule") -> Path:
        # `extra` may go on with `inference:` (it follows it directly, as the driver is last)
        return write_capsule(tmp_path / folder, responses, name="wasm-test", max_turns=None,
                             shell=(), driver=driver, artifacts=artifacts, extra=extra)

    return make
