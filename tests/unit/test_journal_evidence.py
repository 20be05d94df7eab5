"""The journal is evidence, not authority: a resume takes from `journal.jsonl` only the lines
murmur-tui wrote for that session, in the order it wrote them, and says once what it skipped.
Real files, a real FIFO, a real link to /dev/zero, real keys under a MURMUR_HOME."""

from __future__ import annotations

import base64
import json
import os
import stat
import tracemalloc
from pathlib import Path

import pytest

from tests.unit.test_journal import KEY, calls, keyed, result
from tui.core.loop.journal import JOURNAL, Journal, JournaledQuestions
from tui.core.loop.journal_read import Found, continued, holds_turn, read_journal
from tui.core.loop.journal_seal import Seal
from tui.core.text.secrets import redact


def dead_turn(folder: Path, session_id: str = "ses_dead") -> Journal:
    """A turn of c1, c2, c3: c1 finished, c2 asked "which?" (answered "main") and was running."""
    journal = Journal(folder / JOURNAL, keyed(folder / "home", session_id))
    journal.turn("tsk_1", 0, calls("c1", "c2", "c3"))
    journal.call("c1", "t", result("c1"))
    asking = JournaledQuestions(journal, "ctx_1", session_id)
    asking.begin("tsk_1", "c2", "t")
    ask = asking.next("tsk_1", "t", "which?")
    asking.asked(ask, "tsk_1", "t", "which?", None)
    asking.answered(ask, "main")
    return journal


def read(folder: Path) -> Found:
    return read_journal(folder, "ses_dead", folder / "home")


def lines_of(folder: Path) -> list[bytes]:
    return (folder / JOURNAL).read_bytes().splitlines()


def write_lines(folder: Path, lines: list[bytes]) -> None:
    (folder / JOURNAL).write_bytes(b"".join(line + b"\n" for line in lines))


def test_a_new_journal_key_is_minted_0600_under_murmur_home_before_the_first_line(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    journal = Journal(tmp_path / "work" / JOURNAL, Seal(home, "ses_new"))
    key_path = home / "tui" / "journal-keys" / "ses_new.key"
    assert not key_path.exists()  # a session that journals nothing leaves no key
    journal.turn("tsk_1", 0, calls("c1"))
    key = key_path.read_bytes()
    assert len(key) == 32
    assert stat.S_IMODE(key_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_path.parent.stat().st_mode) == 0o700
    assert (home / "tui" / "journal-keys" / "ses_new.lines").read_text() == "1\n"
    data = journal.path.read_bytes()
    for form in (key, key.hex().encode(), base64.b64encode(key)):
        assert form not in data
    # the forms a tool would print it in are redacted from every output
    assert key.hex() not in redact(f"key: {key.hex()}")
    assert base64.b64encode(key).decode() not in redact(base64.b64encode(key).decode())
    line = json.loads(data.splitlines()[0])
    assert (line["seq"], line["prev"], len(line["mac"])) == (1, "", 64)


def test_forged_lines_and_lines_of_another_session_are_skipped_and_said_once(
        tmp_path: Path) -> None:
    dead_turn(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    stranger = Journal(other / JOURNAL, Seal(tmp_path / "home", "ses_other", KEY[::-1]))
    stranger.call("c2", "t", {**result("c2"), "content": [{"type": "text", "text": "OTHER"}]})
    genuine = lines_of(tmp_path)
    forged_call = json.dumps({"event": "call", "call_id": "c2", "tool_name": "t",
                              "message": {**result("c2"), "content": [
                                  {"type": "text", "text": "FORGED"}]}}).encode()
    asked = next(json.loads(x) for x in genuine if b'"asked"' in x)
    forged_answer = json.dumps({"seq": 6, "prev": json.loads(genuine[-1])["mac"],
                                "event": "answered", "id": asked["id"], "answer": "FORGED",
                                "mac": "0" * 64}).encode()
    tampered = genuine[-1].replace(b'"main"', b'"FORGED"')  # its MAC kept
    write_lines(tmp_path, [*genuine[:-1], forged_call, lines_of(other)[0], tampered, forged_answer])
    found = read(tmp_path)
    assert found.turn is not None and list(found.turn.finished) == ["c1"]
    assert "FORGED" not in json.dumps(found.turn.finished)
    assert found.call is not None and found.call.call_id == "c2"
    assert [q.answer for q in found.call.questions] == [None]  # the answer line was tampered
    assert not found.whole  # murmur-tui's answer line is not there: what followed may have run
    assert [c.call_id for c in found.carried()] == ["c2", "c3"]
    assert found.warning is not None and found.warning.count(str(tmp_path / JOURNAL)) == 1
    assert "line 4 is not used: it was not written by murmur-tui for session ses_dead (it " \
        "does not verify), 4 lines skipped in all" in found.warning
    # the genuine answer line, put back after them, still counts: forged lines break nothing
    write_lines(tmp_path, [*genuine[:-1], forged_call, lines_of(other)[0], genuine[-1]])
    again = read(tmp_path)
    assert again.whole and again.call is not None
    assert [q.answer for q in again.call.questions] == ["main"]


def test_a_repeated_line_is_not_used_and_a_moved_one_leaves_the_journal_not_whole(
        tmp_path: Path) -> None:
    dead_turn(tmp_path)
    genuine = lines_of(tmp_path)  # turn, call c1, asked, answered
    write_lines(tmp_path, [*genuine, genuine[0]])  # the turn line again, at the end
    found = read(tmp_path)
    assert found.whole and found.turn is not None and list(found.turn.finished) == ["c1"]
    assert found.warning is not None and "line 5 and every line after it are not used: it " \
        "is a line murmur-tui wrote, out of its place" in found.warning
    write_lines(tmp_path, [genuine[0], genuine[2], genuine[1], genuine[3]])
    moved = read(tmp_path)
    assert not moved.whole and moved.turn is not None and not moved.turn.finished
    assert [c.call_id for c in moved.carried()] == ["c1", "c2", "c3"]  # each may have run
    assert all(not c.answers for c in moved.carried())  # no journaled answer is delivered
    assert moved.warning is not None and "line 2 and every line after it are not used: it " \
        "is a line murmur-tui wrote, out of its place (repeated or moved), 3 lines skipped in " \
        "all" in moved.warning
    assert "murmur-tui wrote 4 lines to it and only 1 are there in order" in moved.warning


def test_a_journal_whose_end_was_cut_away_counts_every_unfinished_call_as_started(
        tmp_path: Path) -> None:
    journal = dead_turn(tmp_path)
    journal.call("c2", "t", result("c2"))
    genuine = lines_of(tmp_path)
    write_lines(tmp_path, genuine[:2])  # back to when c2 had not asked: c3 ran since
    found = read(tmp_path)
    assert not found.whole and found.turn is not None and list(found.turn.finished) == ["c1"]
    assert [c.call_id for c in found.carried()] == ["c2", "c3"]
    assert found.warning is not None and "wrote 5 lines to it and only 2" in found.warning
    os.unlink(tmp_path / JOURNAL)  # gone altogether: not "a session that journaled nothing"
    gone = read(tmp_path)
    assert not gone.empty and gone.turn is None and gone.problem is not None
    assert "is gone, and murmur-tui wrote 5 lines to it" in gone.problem


def test_a_journal_without_its_key_gives_the_resume_nothing_and_says_why(
        tmp_path: Path) -> None:
    journal = dead_turn(tmp_path)
    journal.seal.key_path.unlink()
    found = read(tmp_path)
    assert found.turn is None and found.call is None and not found.empty
    assert found.problem is not None and str(tmp_path / JOURNAL) in found.problem
    assert "has no key" in found.problem and "predates journal keys" in found.problem


def test_a_line_written_after_a_cut_one_continues_the_chain(tmp_path: Path) -> None:
    """A resume writes `taken` into the dead session's journal, whose last line the crash may
    have cut: the cut line is skipped, the new line is trusted, the journal stays whole."""
    dead_turn(tmp_path)
    with (tmp_path / JOURNAL).open("ab") as f:
        f.write(b'{"seq":5,"prev":"ab')  # the kill cut this line
    assert read(tmp_path).warning is None  # a cut last line is what a crash leaves: no warning
    asked = read(tmp_path).call
    assert asked is not None
    later = continued(tmp_path, "ses_dead", tmp_path / "home")
    later.taken(asked.questions[0].qid, "ses_later")
    found = read(tmp_path)
    assert found.whole and found.call is not None and found.call.questions[0].taken
    assert found.warning is not None and "line 5 is not used: it was not written" in found.warning


def test_a_later_session_whose_journal_cannot_show_it_did_not_take_the_turn_over_may_have(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    later = tmp_path / "later"
    assert holds_turn(later, "ses_later", home, "msg_a") is None  # journaled nothing
    journal = Journal(later / JOURNAL, keyed(home, "ses_later"))
    journal.turn("tsk_1", 0, calls("c1"))
    journal.call("c1", "t", result("c1"))
    assert holds_turn(later, "ses_later", home, "msg_a") == ""
    assert holds_turn(later, "ses_later", home, "msg_b") is None
    genuine = lines_of(later)
    write_lines(later, [genuine[1]])  # its turn line removed
    doubt = holds_turn(later, "ses_later", home, "msg_a")
    assert doubt and "out of its place" in doubt
    forged = json.dumps({"event": "turn", "task_id": "t", "message": calls("c9")}).encode()
    write_lines(later, [forged])  # a forged turn line alone: it proves nothing either way
    doubt = holds_turn(later, "ses_later", home, "msg_a")
    assert doubt and "wrote 2 lines to it and only 0" in doubt


@pytest.mark.timeout(60)
def test_the_journal_reader_refuses_a_fifo_a_link_to_dev_zero_a_folder_and_a_huge_file(
        tmp_path: Path) -> None:
    """Each is refused at once, naming the file and why: never a hang, never its bytes read
    past the 64 MiB cap."""
    dead_turn(tmp_path)
    path = tmp_path / JOURNAL
    path.unlink()
    os.mkfifo(path)
    found = read(tmp_path)
    assert found.problem == f"{path} is not read: it is a FIFO (named pipe)"
    path.unlink()
    path.symlink_to("/dev/zero")
    assert read(tmp_path).problem == f"{path} is not read: it is a link"
    path.unlink()
    path.mkdir()
    assert read(tmp_path).problem == f"{path} is not read: it is a folder"
    path.rmdir()
    with path.open("wb") as f:
        f.truncate(4 << 30)  # 4 GiB, sparse
    tracemalloc.start()
    try:
        huge = read(tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert huge.problem == f"{path} is {4 << 30} bytes, over the 64 MiB a resume reads"
    assert peak < 1 << 20  # nothing of it was read


@pytest.mark.timeout(60)
def test_a_100000_deep_line_and_a_cut_line_are_skipped_without_failing(tmp_path: Path) -> None:
    journal = dead_turn(tmp_path)
    deep = b'{"event":"call","message":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    seal = journal.seal
    body = b'{"seq":5,"prev":"' + seal.prev.encode() + b'",' + deep[1:]
    sealed = body[:-1] + b',"mac":"' + seal.mac(body).encode() + b'"}'  # verifies, too deep
    write_lines(tmp_path, [*lines_of(tmp_path), deep])
    found = read(tmp_path)
    assert found.call is not None and found.call.call_id == "c2"
    assert found.warning is not None and "line 5 is not used: it was not written" \
        in found.warning
    write_lines(tmp_path, [*lines_of(tmp_path)[:4], sealed])
    found = read(tmp_path)  # the line is the session's, but no JSON a resume can use
    assert found.whole and found.call is not None and found.call.call_id == "c2"
    assert found.turn is not None and list(found.turn.finished) == ["c1"]
    (tmp_path / JOURNAL).write_bytes(b"\n".join(lines_of(tmp_path)[:4]) + b'\n{"seq":5,"pr')
    cut = read(tmp_path)
    assert cut.warning is None and cut.call is not None and cut.call.call_id == "c2"
