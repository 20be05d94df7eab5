"""One "host" of the fleet benchmark (tests/benchmarks/fleet.py): many served sessions in one
process, each with its own door bound to this host's loopback address (127.0.0.N), each
written to the running records of `--home` as `launch --headless --serve` writes them.

A real session per capsule (the scripted driver, the real door over HTTP, the real running
record), run on threads of this one process instead of a process each: two hundred Python
processes would not fit beside the fleet being measured on a two-core machine.

Prints one JSON line `{"session_id": …, "url": …, "capsule": …}` per session once its door is
up, then `{"ready": N}`; runs until stdin closes.

Run: python tests/benchmarks/fleet_host.py --home HOME --bind 127.0.0.2 CAPSULE…
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tui.core.asking.questions import QuestionBoard  # noqa: E402
from tui.core.cancel import CancelToken  # noqa: E402
from tui.core.door import Door  # noqa: E402
from tui.core.door.serving import Serving  # noqa: E402
from tui.core.headless import HeadlessResponder  # noqa: E402
from tui.core.loop.launch import LaunchOptions  # noqa: E402
from tui.core.loop.session import Session  # noqa: E402
from tui.core.manifest.reader import load_capsule  # noqa: E402


def serve(root: Path, home: Path, bind: str, cancel: CancelToken) -> Serving:
    capsule = load_capsule(root)
    board = QuestionBoard()
    board.door_only = True
    door = Door(capsule, board, bind, 0)
    session = Session(capsule, LaunchOptions(home=home), sinks=[door.sink],
                      responder=HeadlessResponder([], board=board))
    serving = Serving.start(door, session)

    def work() -> None:
        if serving.waits and not serving.first_task(cancel):
            return
        session.run()

    threading.Thread(target=work, name=f"session {session.session_id}", daemon=True).start()
    return serving


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--bind", default="127.0.0.1")
    parser.add_argument("capsules", type=Path, nargs="+")
    args = parser.parse_args()
    cancel = CancelToken()
    served: list[Serving] = []
    try:
        for root in args.capsules:
            serving = serve(root, args.home, args.bind, cancel)
            served.append(serving)
            assert serving.record is not None
            print(json.dumps({"session_id": serving.record.session_id, "url": serving.record.url,
                              "capsule": serving.record.capsule_name}), flush=True)
        print(json.dumps({"ready": len(served)}), flush=True)
        sys.stdin.read()  # until the benchmark closes it (or dies)
    finally:
        cancel.set()
        for serving in served:
            serving.end()


if __name__ == "__main__":
    main()
