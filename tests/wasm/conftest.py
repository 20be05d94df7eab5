"""Capsules built around the committed WAT fixtures (tests/wasm/fixtures/*.wasm)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"

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
        root = tmp_path / folder
        root.mkdir(parents=True, exist_ok=True)
        if responses is not None:
            (root / "script.json").write_text(json.dumps(responses), encoding="utf-8")
        driver_entry = driver if driver is not None else (
            "  - name: script-driver\n    runtime: driver\n    builtin: scripted\n"
            "    config: {script: script.json}\n")
        manifest = (
            "name: wasm-test\nversion: '1.0.0'\nartifacts:\n"
            + driver_entry
            + artifacts.replace("{fixtures}", str(FIXTURES))
            + "inference:\n  model: test-model\n  driver:\n    artifact: "
            + ("script-driver" if driver is None else "wasm-driver") + "\n"
            + extra
        )
        (root / "murmur.yaml").write_text(manifest, encoding="utf-8")
        return root

    return make


def call(tool: str, tool_input: dict[str, Any], call_id: str = "c1") -> dict[str, Any]:
    return {"stop_reason": "tool_call",
            "content": [{"type": "tool_call", "id": call_id, "name": tool, "input": tool_input}]}


def answer(text: str) -> dict[str, Any]:
    return {"stop_reason": "end_turn", "content": [{"type": "text", "text": text}]}
