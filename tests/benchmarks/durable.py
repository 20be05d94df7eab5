"""Benchmark: what the journal (durable turns and questions) costs.

1. Per tool call. A turn's journaling — its `turn` line before the first call and one `call`
   line per finished call, each fsynced — for turns of one call and of ten calls, against
   building the same messages without a journal; the cost per call is the difference.
   Goal: under 1 ms on this machine's disk.
2. Per question. `Host.ask` put N questions to an answering responder with the journal (an
   `asked` and an `answered` line, each fsynced) and without it, in the same run.
3. Resume. Reading the open turn back from a journal of 10,000 journaled calls (what
   `launch --resume` does before its first task, each line's MAC and place checked): 10,000
   turns of one call, and one turn of 10,000 calls. Goal: under 200 ms.
4. The seal. A line sealed (its `seq`, `prev` and HMAC-SHA256, docs/security.md "The journal
   is evidence") against the same line as plain JSON, per line, in the same run.

Run: python tests/benchmarks/durable.py   (prints one JSON object)
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tui.core.asking.request import InputRequest  # noqa: E402
from tui.core.cancel import CancelToken  # noqa: E402
from tui.core.chat import assistant_message, tool_message  # noqa: E402
from tui.core.events.stream import EventStream  # noqa: E402
from tui.core.loop.host import Host  # noqa: E402
from tui.core.loop.journal import JOURNAL, Journal, JournaledQuestions  # noqa: E402
from tui.core.loop.journal_read import read_journal  # noqa: E402
from tui.core.loop.journal_seal import Seal  # noqa: E402
from tui.core.loop.report import Report  # noqa: E402
from tui.core.record.reader import RecordReader  # noqa: E402

QUESTIONS = 1_000
CALLS = 1_000
JOURNALED = 10_000
SEALED = 20_000
KEY = bytes(range(32))


def sealed(folder: Path, session_id: str = "ses_bench") -> Journal:
    """A journal in `folder` whose key is in `folder/home` (a MURMUR_HOME)."""
    seal = Seal(folder / "home", session_id)
    seal.folder.mkdir(parents=True, exist_ok=True)
    seal.key_path.write_bytes(KEY)
    return Journal(folder / JOURNAL, Seal(folder / "home", session_id, KEY))


class Answering:
    """A person who answers at once."""

    def ask(self, request: InputRequest) -> str:
        return "yes"


def host(folder: Path, journaled: bool) -> Host:
    report = Report(EventStream("ses_bench", []), folder / "bootstrap.log")
    report.position.task_id = "tsk_bench"
    made = Host(report, Answering(), CancelToken(), None, "m", RecordReader(), None)
    if journaled:
        questions = JournaledQuestions(sealed(folder), "ctx_bench", "ses_bench")
        questions.begin("tsk_bench", "call_1", "ask")
        made.questions = questions
    return made


def per_question(folder: Path, journaled: bool) -> float:
    asking = host(folder, journaled)
    started = time.perf_counter()
    for n in range(QUESTIONS):
        asking.ask("ask", f"question {n}?")
    return (time.perf_counter() - started) / QUESTIONS * 1000


def block(n: int) -> dict[str, object]:
    return {"type": "tool_call", "id": f"c{n}", "name": "read-file",
            "input": {"path": f"src/module_{n}.py"}}


def per_call(folder: Path, journaled: bool, per_turn: int) -> float:
    """ms per call of turns of `per_turn` calls: the messages built, and journaled or not."""
    journal = sealed(folder) if journaled else None
    started = time.perf_counter()
    for t in range(CALLS // per_turn):
        message = assistant_message([{"type": "text", "text": "Reading the files."},
                                     *(block(t * per_turn + k) for k in range(per_turn))])
        if journal is not None:
            journal.turn("tsk_bench", t, message)
        for k in range(per_turn):
            cid = f"c{t * per_turn + k}"
            result = tool_message(cid, False, "def main() -> None:\n    run()\n" * 8, None)
            if journal is not None:
                journal.call(cid, "read-file", result)
    return (time.perf_counter() - started) / CALLS * 1000


def resume_ms(folder: Path, turns: int) -> float:
    """Reading the open turn from a journal of JOURNALED calls in `turns` turns (the last call
    of the last turn did not finish)."""
    per_turn = JOURNALED // turns
    seal = sealed(folder, "ses_dead").seal
    lines = []
    for t in range(turns):
        message = assistant_message([block(t * per_turn + k) for k in range(per_turn)])
        lines.append(line(seal, {"event": "turn", "task_id": "tsk_1", "turn": t,
                                 "message": message}))
        for k in range(per_turn):
            cid = f"c{t * per_turn + k}"
            if t * per_turn + k < JOURNALED - 1:
                lines.append(line(seal, {"event": "call", "call_id": cid, "tool_name": "read",
                                         "message": tool_message(cid, False, "text", None)}))
    (folder / JOURNAL).write_bytes(b"\n".join(lines) + b"\n")
    started = time.perf_counter()
    found = read_journal(folder, "ses_dead", folder / "home")
    took = (time.perf_counter() - started) * 1000
    assert found.call is not None and found.call.call_id == f"c{JOURNALED - 1}"
    assert found.turn is not None and len(found.turn.finished) == per_turn - 1
    assert found.whole and found.warning is None
    return took


def line(seal: Seal, value: dict[str, object]) -> bytes:
    """`value` sealed as the journal's next line (counted, as a written line is)."""
    data, mac = seal.line(value)
    seal.wrote(mac)
    return data


def seal_us(folder: Path) -> tuple[float, float]:
    """µs per line: a typical `call` line as plain JSON, and sealed."""
    seal = sealed(folder, "ses_seal").seal
    value = {"ts_ms": 1, "event": "call", "call_id": "c1", "tool_name": "read-file",
             "message": tool_message("c1", False, "def main() -> None:\n    run()\n" * 8, None)}
    started = time.perf_counter()
    for _ in range(SEALED):
        json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    plain = (time.perf_counter() - started) / SEALED * 1e6
    started = time.perf_counter()
    for _ in range(SEALED):
        seal.line(value)
    return plain, (time.perf_counter() - started) / SEALED * 1e6


def main() -> None:
    with tempfile.TemporaryDirectory(dir=REPO) as tmp:  # the project's disk, not a tmpfs
        root = Path(tmp)
        for name in ("none", "journal", "calls1", "calls10", "r1", "r10000", "seal"):
            (root / name).mkdir()
        bare1 = per_call(root / "none", False, 1)
        bare10 = per_call(root / "none", False, 10)
        one = per_call(root / "calls1", True, 1)
        ten = per_call(root / "calls10", True, 10)
        none = per_question(root / "none", False)
        journaled = per_question(root / "journal", True)
        many_turns = resume_ms(root / "r1", JOURNALED)
        one_turn = resume_ms(root / "r10000", 1)
        plain_us, sealed_us = seal_us(root / "seal")
    print(json.dumps({
        "calls": CALLS,
        "journal_cost_ms_per_call_turns_of_1": round(one - bare1, 4),
        "journal_cost_ms_per_call_turns_of_10": round(ten - bare10, 4),
        "call_ms_without_journal": round(bare1, 4),
        "ratio": round(ten / bare10, 1) if bare10 else None,
        "questions": QUESTIONS,
        "journal_cost_ms_per_question": round(journaled - none, 4),
        "resume_read_ms_10000_calls_in_10000_turns": round(many_turns, 2),
        "resume_read_ms_10000_calls_in_one_turn": round(one_turn, 2),
        "line_us_plain_json": round(plain_us, 2),
        "line_us_sealed": round(sealed_us, 2),
        "seal_cost_us_per_line": round(sealed_us - plain_us, 2),
    }))


if __name__ == "__main__":
    main()
