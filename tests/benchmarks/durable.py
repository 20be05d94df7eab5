"""Benchmark: what durable questions cost.

1. Per question. `Host.ask` put N questions to an answering responder with the journal
   (`questions.jsonl`: an `asked` and an `answered` line, each fsynced) and without it, in the
   same run; the cost per question is the difference. Goal: under 1 ms on this machine's disk.
2. Resume. Reading the interrupted call from a journal of 10,000 journaled questions (what
   `launch --resume` does before its first task). Goal: under 200 ms.

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

from tui.core.asking import InputRequest  # noqa: E402
from tui.core.cancel import CancelToken  # noqa: E402
from tui.core.event_stream import EventStream  # noqa: E402
from tui.core.loop.host import Host  # noqa: E402
from tui.core.loop.journal import (  # noqa: E402
    JOURNAL,
    QuestionJournal,
    Questions,
    read_interrupted,
)
from tui.core.loop.report import Report  # noqa: E402
from tui.core.record.reader import RecordReader  # noqa: E402

QUESTIONS = 2_000
JOURNALED = 10_000


class Answering:
    """A person who answers at once."""

    def ask(self, request: InputRequest) -> str:
        return "yes"


def host(folder: Path, journaled: bool) -> Host:
    report = Report(EventStream("ses_bench", []), folder / "bootstrap.log")
    report.position.task_id = "tsk_bench"
    made = Host(report, Answering(), CancelToken(), None, "m", RecordReader(), None)
    if journaled:
        questions = Questions(QuestionJournal(folder / JOURNAL), "ctx_bench", "ses_bench")
        questions.begin("tsk_bench", "call_1", "ask")
        made.questions = questions
    return made


def per_question(folder: Path, journaled: bool) -> float:
    asking = host(folder, journaled)
    started = time.perf_counter()
    for n in range(QUESTIONS):
        asking.ask("ask", f"question {n}?")
    return (time.perf_counter() - started) / QUESTIONS * 1000


def resume_ms(folder: Path) -> float:
    journal = QuestionJournal(folder / JOURNAL)
    lines = []
    for n in range(JOURNALED):
        qid = f"q_{n:024x}"
        lines.append(json.dumps({"event": "asked", "id": qid, "task_id": "tsk_1",
                                 "call_id": f"c{n}", "tool_name": "ask", "sequence": 0,
                                 "prompt_sha256": "0" * 64, "prompt": f"question {n}?",
                                 "deadline_ms": None}))
        lines.append(json.dumps({"event": "answered", "id": qid, "answer": "yes"}))
    journal.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    started = time.perf_counter()
    found = read_interrupted(folder, "ses_dead")
    took = (time.perf_counter() - started) * 1000
    assert found is not None and found.call_id == f"c{JOURNALED - 1}"
    return took


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "none").mkdir()
        (root / "journal").mkdir()
        (root / "resume").mkdir()
        none = per_question(root / "none", False)
        journaled = per_question(root / "journal", True)
        resume = resume_ms(root / "resume")
    print(json.dumps({
        "questions": QUESTIONS,
        "ask_ms_without_journal": round(none, 4),
        "ask_ms_with_journal": round(journaled, 4),
        "journal_cost_ms_per_question": round(journaled - none, 4),
        "ratio": round(journaled / none, 1) if none else None,
        "resume_read_ms_10000_questions": round(resume, 2),
    }))


if __name__ == "__main__":
    main()
