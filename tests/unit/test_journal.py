"""The journal on its own: stable question ids, 0600 lines, and what a crash leaves readable —
the open turn, its finished calls, the interrupted call and its questions."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.core.loop.journal import (
    JOURNAL,
    Interrupted,
    Journal,
    JournaledQuestions,
    question_id,
)
from tui.core.loop.journal_read import Found, read_journal
from tui.core.loop.journal_seal import Seal

KEY = bytes(range(32))  # one key for every example: each new key is a secret to redact


def keyed(home: Path, session_id: str) -> Seal:
    """`session_id`'s seal with its key file in `home` (as its first line would mint it)."""
    seal = Seal(home, session_id)
    seal.folder.mkdir(parents=True, exist_ok=True)
    seal.key_path.write_bytes(KEY)
    return Seal(home, session_id, KEY)


def journal_in(folder: Path, name: str = JOURNAL, session_id: str = "ses_dead") -> Journal:
    """A session's journal in `folder`, its key under `folder/home` (its MURMUR_HOME)."""
    return Journal(folder / name, keyed(folder / "home", session_id))


def read(folder: Path) -> Found:
    return read_journal(folder, "ses_dead", folder / "home")


def test_a_question_id_depends_on_context_task_call_and_place_only() -> None:
    first = question_id("ctx_1", "tsk_1", "c1", 0)
    assert first == question_id("ctx_1", "tsk_1", "c1", 0)
    others = {question_id("ctx_2", "tsk_1", "c1", 0), question_id("ctx_1", "tsk_2", "c1", 0),
              question_id("ctx_1", "tsk_1", "c2", 0), question_id("ctx_1", "tsk_1", "c1", 1)}
    assert first not in others and len(others) == 4


def test_the_interrupted_call_is_read_back_after_a_cut_last_line(tmp_path: Path) -> None:
    journal = journal_in(tmp_path)
    asking = JournaledQuestions(journal, "ctx_1", "ses_dead")
    asking.begin("tsk_1", "c7", "ask")
    for prompt, reply in (("first?", "one"), ("second?", None)):
        ask = asking.next("tsk_1", "ask", prompt)
        asking.asked(ask, "tsk_1", "ask", prompt, None)
        if reply is not None:
            asking.answered(ask, reply)
    assert stat.S_IMODE(journal.path.stat().st_mode) == 0o600
    with journal.path.open("ab") as f:
        f.write(b'{"event":"answered","id":"q_')  # the kill cut this line
    found = read(tmp_path).call
    assert found is not None and (found.task_id, found.call_id) == ("tsk_1", "c7")
    assert [(q.prompt, q.answer) for q in found.questions] == [("first?", "one"),
                                                               ("second?", None)]
    # run again in a new session: the first takes its answer, the second is asked anew
    later = JournaledQuestions(journal_in(tmp_path, "later.jsonl", "ses_new"), "ctx_1",
                               "ses_new", [found])
    carried = later.carries("c7", "ask")
    assert carried is found and later.carries("c7", "ask") is None  # carried once
    later.begin("tsk_new", "c7", "ask", carried)
    one = later.next("tsk_new", "ask", "first?")
    assert one.answer == "one" and later.take(one) == "one"
    two = later.next("tsk_new", "ask", "second?")
    assert two.before_restart and two.answer is None
    again = read(tmp_path).call
    assert again is not None and again.questions[0].taken


def calls(*ids: str) -> dict[str, object]:
    return {"role": "assistant", "id": "msg_a", "content": [
        {"type": "text", "text": "working"},
        *({"type": "tool_call", "id": cid, "name": "t", "input": {}} for cid in ids)]}


def result(cid: str) -> dict[str, object]:
    return {"role": "tool", "tool_call_id": cid, "is_error": False, "id": f"msg_{cid}",
            "content": [{"type": "text", "text": f"{cid} done"}]}


def test_the_open_turn_is_the_last_one_with_its_finished_calls_and_the_interrupted_one(
        tmp_path: Path) -> None:
    journal = journal_in(tmp_path)
    journal.turn("tsk_1", 0, calls("old"))  # an earlier turn, whole
    journal.call("old", "t", result("old"))
    journal.turn("tsk_1", 1, calls("c1", "c2", "c3"))
    journal.call("c1", "t", result("c1"))
    journal.call("zz", "t", result("zz"))  # not one of the turn's calls
    asking = JournaledQuestions(journal, "ctx_1", "ses_dead")
    asking.begin("tsk_1", "c2", "t")
    ask = asking.next("tsk_1", "t", "which?")
    asking.asked(ask, "tsk_1", "t", "which?", None)
    with journal.path.open("ab") as f:
        f.write(b'{"event":"call","call_id":"c2"')  # the kill cut this line
    found = read(tmp_path)
    assert found.turn is not None and found.turn.turn == 1
    assert [b["id"] for b in found.turn.calls()] == ["c1", "c2", "c3"]
    assert list(found.turn.finished) == ["c1"]
    assert isinstance(found.call, Interrupted) and found.call.call_id == "c2"
    assert [q.prompt for q in found.call.questions] == ["which?"]


def test_a_turn_that_was_dropped_or_whose_calls_all_finished_leaves_nothing_running(
        tmp_path: Path) -> None:
    journal = journal_in(tmp_path)
    journal.turn("tsk_1", 0, calls("c1", "c2"))
    journal.call("c1", "t", result("c1"))
    journal.dropped("msg_a", "StopOnCancel")
    assert read(tmp_path).turn is None
    journal.turn("tsk_1", 1, {**calls("c3"), "id": "msg_b"})
    journal.call("c3", "t", result("c3"))
    found = read(tmp_path)
    assert found.turn is not None and found.call is None  # the record decides if it is whole


def test_a_hostile_journal_is_read_as_far_as_it_makes_sense(tmp_path: Path) -> None:
    """Lines that verify but make no sense (murmur-tui never writes them) and lines that are
    not even JSON: neither gives the resume a turn or a call."""
    journal = journal_in(tmp_path)
    journal._line({"event": "turn", "task_id": 1, "message": "no"})
    with journal.path.open("ab") as f:
        f.write(b'\x00\xff garbage\n[1,2]\n')
    journal._line({"event": "turn", "task_id": "t",
                   "message": {"role": "user", "id": "m", "content": []}})
    journal._line({"event": "asked", "id": "q_1", "task_id": "t", "call_id": "c",
                   "tool_name": "x", "sequence": "0", "prompt": "p", "prompt_sha256": "s"})
    found = read(tmp_path)
    assert found.turn is None and found.call is None and found.whole
    assert found.warning is not None and "line 2 is not used: it was not written by murmur-tui" \
        in found.warning


def test_a_retried_call_numbers_its_questions_after_the_first_attempts(tmp_path: Path) -> None:
    asking = JournaledQuestions(journal_in(tmp_path), "ctx_1", "ses_1")
    asking.begin("tsk_1", "c1", "t")
    first = asking.next("tsk_1", "t", "which?")
    asking.end()
    asking.begin("tsk_1", "c1", "t", again=True)
    second = asking.next("tsk_1", "t", "which?")
    asking.end()
    assert first.qid != second.qid and second.sequence == 1
    asking.begin("tsk_1", "c2", "t", again=True)  # another call is not a retry of c1
    assert asking.next("tsk_1", "t", "which?").sequence == 0


def test_a_journaled_result_that_is_no_chat_message_counts_as_not_finished(
        tmp_path: Path) -> None:
    journal = journal_in(tmp_path)
    journal.turn("tsk_1", 0, calls("c1"))
    journal.call("c1", "t", {**result("c1"), "content": "not blocks"})
    found = read(tmp_path)
    assert found.turn is not None and not found.turn.finished
    assert found.call is not None and found.call.call_id == "c1"


def test_no_key_byte_reaches_the_journal(tmp_path: Path) -> None:
    import base64

    from tui.core.text import secrets

    key = "sk-journal-" + "k3y" * 12
    secrets.remember(key)
    journal = journal_in(tmp_path)
    journal.turn("tsk_1", 0, {**calls("c1"), "content": [
        {"type": "text", "text": f"using {key}"},
        {"type": "tool_call", "id": "c1", "name": "t", "input": {"token": key}}]})
    journal.call("c1", "t", {**result("c1"), "content": [{"type": "text", "text": key}]})
    asking = JournaledQuestions(journal, "ctx_1", "ses_1")
    asking.begin("tsk_1", "c2", "t")
    ask = asking.next("tsk_1", "t", f"is {key} right?")
    asking.asked(ask, "tsk_1", "t", f"is {key} right?", None)
    asking.answered(ask, key)
    data = journal.path.read_bytes()
    assert key.encode() not in data
    assert base64.b64encode(key.encode())[:20] not in data


@settings(max_examples=150, deadline=None)
@given(cut=st.integers(min_value=0, max_value=10_000))
def test_a_journal_cut_anywhere_reads_as_a_prefix_of_what_was_written(cut: int) -> None:
    """A crash can stop the journal at any byte: reading never raises, a result counts only
    when its whole JSON is there, and the interrupted call is the first without one."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / JOURNAL
        journal = journal_in(Path(folder))
        journal.turn("tsk_1", 0, calls("c1", "c2", "c3"))
        ends = [path.stat().st_size]
        for cid in ("c1", "c2"):
            journal.call(cid, "t", result(cid))
            ends.append(path.stat().st_size)
        data = path.read_bytes()
        path.write_bytes(data[:cut % (len(data) + 1)])
        kept = path.stat().st_size
        # the crash came before the line being written was counted (its count comes after it)
        journal.seal.count_path.write_text(f"{sum(1 for end in ends if kept >= end)}\n")
        found = read(Path(folder))
        assert found.problem is None and found.warning is None and found.whole
        if kept < ends[0] - 1:  # a line is whole once its JSON is, newline or not
            assert found.turn is None and found.call is None
            return
        whole = sum(1 for end in ends[1:] if kept >= end - 1)
        assert found.turn is not None and list(found.turn.finished) == ["c1", "c2"][:whole]
        assert found.call is not None and found.call.call_id == ["c1", "c2", "c3"][whole]


def test_a_journal_that_cannot_be_written_is_said_once_and_the_session_goes_on(
        tmp_path: Path) -> None:
    (tmp_path / JOURNAL).mkdir()  # where the file should be: nothing can be written there
    said: list[str] = []
    journal = Journal(tmp_path / JOURNAL, Seal(tmp_path / "home", "ses_x"), said.append)
    journal.turn("tsk_1", 0, calls("c1"))
    journal.call("c1", "t", result("c1"))
    assert journal.broken and len(said) == 1
    assert str(tmp_path / JOURNAL) in said[0] and "do not survive a crash" in said[0]


@pytest.mark.parametrize("planted", ["fifo", "link"])
def test_a_fifo_or_a_link_at_the_journal_is_never_written_through_and_the_session_goes_on(
        tmp_path: Path, planted: str) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("theirs\n")
    if planted == "fifo":
        os.mkfifo(tmp_path / JOURNAL)
    else:
        (tmp_path / JOURNAL).symlink_to(target)
    said: list[str] = []
    journal = Journal(tmp_path / JOURNAL, Seal(tmp_path / "home", "ses_x"), said.append)
    journal.turn("tsk_1", 0, calls("c1"))  # a FIFO would block this write: it must not
    assert journal.broken and len(said) == 1 and str(tmp_path / JOURNAL) in said[0]
    assert target.read_text() == "theirs\n"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3), max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(fields=st.dictionaries(st.sampled_from(
    ["event", "task_id", "turn", "message", "call_id", "tool_name", "message_id", "id",
     "sequence", "prompt", "prompt_sha256", "answer", "deadline_ms"]), JSON_VALUES),
    event=st.sampled_from(["turn", "call", "dropped", "asked", "answered", "taken"]))
def test_any_value_in_any_field_of_a_journal_line_is_read_without_failing(
        fields: dict[str, object], event: str) -> None:
    """A hostile (or corrupt) journal: whatever JSON a field holds, reading it never raises."""
    with tempfile.TemporaryDirectory() as folder:
        journal = journal_in(Path(folder))
        journal.turn("tsk_1", 0, calls("c1", "c2"))
        journal.call("c1", "t", result("c1"))
        journal._line({**fields, "event": event})
        found = read(Path(folder))
        if found.turn is not None:  # the last good turn: its calls and what finished
            assert set(found.turn.finished) <= {str(c["id"]) for c in found.turn.calls()}
