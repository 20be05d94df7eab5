"""Re-record tests/app/streams/session.jsonl: a real headless session of tests/app/capsule.

Run from the repository root: python tests/app/record_stream.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        result = subprocess.run(
            [sys.executable, "-m", "tui", "launch", str(HERE / "capsule"), "--headless",
             "--json", "--task", "Look around, carefully.", "--answer", "blue",
             "--workdir", str(Path(home) / "work")],
            capture_output=True, text=True, env={**os.environ, "MURMUR_HOME": home},
            check=True)
    (HERE / "streams" / "session.jsonl").write_text(result.stdout, encoding="utf-8")


if __name__ == "__main__":
    main()
