"""The question journal on its own: stable ids, 0600 lines, and what a crash leaves readable."""

from __future__ import annotations

import stat
from pathlib import Path

from tui.core.loop.journal import JOURNAL, QuestionJournal, Questions, question_id, read_interrupted


def test_a_question_id_depends_on_context_task_call_and_place_only() -> None:
    first = question_id("ctx_1", "tsk_1", "c1", 0)
    assert first == question_id("ctx_1", "tsk_1", "c1", 0)
    others = {question_id("ctx_2", "tsk_1", "c1", 0), question_id("ctx_1", "tsk_2", "c1", 0),
              question_id("ctx_1", "tsk_1", "c2", 0), question_id("ctx_1", "tsk_1", "c1", 1)}
    assert first not in others and len(others) == 4


def test_the_interrupted_call_is_read_back_after_a_cut_last_line(tmp_path: Path) -> None:
    journal = QuestionJournal(tmp_path / JOURNAL)
    asking = Questions(journal, "ctx_1", "ses_dead")
    asking.begin("tsk_1", "c7", "ask")
    for prompt, reply in (("first?", "one"), ("second?", None)):
        ask = asking.next("tsk_1", "ask", prompt)
        asking.asked(ask, "tsk_1", "ask", prompt, None)
        if reply is not None:
            asking.answered(ask, reply)
    assert stat.S_IMODE(journal.path.stat().st_mode) == 0o600
    with journal.path.open("ab") as f:
        f.write(b'{"event":"answered","id":"q_')  # the kill cut this line
    found = read_interrupted(tmp_path, "ses_dead")
    assert found is not None and (found.task_id, found.call_id) == ("tsk_1", "c7")
    assert [(q.prompt, q.answer) for q in found.questions] == [("first?", "one"),
                                                               ("second?", None)]
    # run again in a new session: the first takes its answer, the second is asked anew
    later = Questions(QuestionJournal(tmp_path / "later.jsonl"), "ctx_1", "ses_new", found)
    carried = later.carries("c7", "ask")
    assert carried is found and later.carries("c7", "ask") is None  # carried once
    later.begin("tsk_new", "c7", "ask", carried)
    one = later.next("tsk_new", "ask", "first?")
    assert one.answer == "one" and later.take(one) == "one"
    two = later.next("tsk_new", "ask", "second?")
    assert two.before_restart and two.answer is None
    again = read_interrupted(tmp_path, "ses_dead")
    assert again is not None and again.questions[0].taken
