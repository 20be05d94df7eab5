"""Test guest: a script capsule in Python (componentize-py, world `capsule`).

Built by tests/guests/build.py (`build_guest("py_capsule")`); never committed as a binary.
`run()` invokes the declared tool `py-tool` twice through `murmur:tool-registry/invoke` — once
with `{"op": "echo", "x": 1}` and once with `{"op": "write", ...}` — then an undeclared tool,
and writes what came back to `out/result.txt` as one JSON object: for each call the tool's own
result fields (`status`, `summary`, `data`, `data_path`, `truncated`, `metadata`) or the error.
"""

from __future__ import annotations

import json
import os
from typing import Any

import componentize_py_types
import wit_world
import wit_world.exports
from wit_world.imports import invoke, run


def _call(name: str, data: str | None) -> dict[str, Any]:
    try:
        result = invoke.invoke(name, run.ToolInput(data=data, log_path=None))
    except componentize_py_types.Err as err:
        return {"error": str(err.value)}
    return {"status": result.status.name.lower(), "summary": result.summary,
            "data": result.data, "data_path": result.data_path, "truncated": result.truncated,
            "metadata": [list(pair) for pair in result.metadata]}


class Run(wit_world.exports.Run):
    def run(self) -> None:
        calls = {
            "echo": _call("py-tool", json.dumps({"op": "echo", "x": 1})),
            "write": _call("py-tool", json.dumps({"op": "write", "path": "note.txt",
                                                  "text": "kept"})),
            "undeclared": _call("no-such-tool", None),
        }
        os.makedirs("out", exist_ok=True)
        with open("out/result.txt", "w", encoding="utf-8") as f:
            json.dump(calls, f, sort_keys=True)
