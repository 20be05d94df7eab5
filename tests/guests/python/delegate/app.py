"""Test guest: a script capsule that delegates (componentize-py, world `capsule`).

Built by tests/guests/build.py (`build_guest("py_delegate")`); never committed as a binary.
`run()` reads its own task from `task.md`: the first line is the peer's URL, an optional
second line `context: <id>` names the context to continue, and the rest is the text it sends
through `murmur:message/send` (message id `m1`). It writes what came back to `out/result.txt`
as one JSON object: `{"ok": {"task_id", "context_id", "state"}}` or `{"error": "<err>"}`.
"""

from __future__ import annotations

import json
import os

import componentize_py_types
import wit_world
import wit_world.exports
from wit_world.imports import send


class Run(wit_world.exports.Run):
    def run(self) -> None:
        with open("task.md", encoding="utf-8") as f:
            lines = f.read().split("\n")
        peer = lines[0].strip()
        rest = lines[1:]
        context = None
        if rest and rest[0].startswith("context: "):
            context = rest[0].removeprefix("context: ").strip()
            rest = rest[1:]
        message = send.Message(message_id="m1", context_id=context, text="\n".join(rest).strip())
        try:
            got = send.send(peer, message)
        except componentize_py_types.Err as err:
            outcome: dict[str, object] = {"error": str(err.value)}
        else:
            outcome = {"ok": {"task_id": got.task_id, "context_id": got.context_id,
                              "state": got.state}}
        os.makedirs("out", exist_ok=True)
        with open("out/result.txt", "w", encoding="utf-8") as f:
            json.dump(outcome, f, sort_keys=True)
