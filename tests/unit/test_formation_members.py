"""A formation member's side, on real pipes: its seat read from the channel (refused with
E-RUN-046 when the channel is wrong), the URL line, the warning of a member started by hand,
and the lifeline whose end winds the member down."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.waits import block_until
from tui.core.errors import SeatError
from tui.core.formation.lifeline import WindDown, watch
from tui.core.formation.members import join, record_keys
from tui.core.formation.seat import Callee, Seat, urls_line

FRM = "frm_" + "1" * 32
OTHER = "frm_" + "2" * 32


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    for fd in (read, write):
        with contextlib.suppress(OSError):
            os.close(fd)


def seat_line(formation: str = FRM) -> bytes:
    seat = Seat(formation, "coder", False, "a2V5", (Callee("reviewer", "mft1.x.y"),))
    return seat.first_line().encode()


def env(**values: object) -> dict[str, str]:
    names = {"id": "MURMUR_FORMATION_ID", "channel": "MURMUR_FORMATION_CHANNEL",
             "lifeline": "MURMUR_FORMATION_LIFELINE", "spawner": "MURMUR_SPAWNER"}
    return {names[key]: str(value) for key, value in values.items()}


def refusal(environ: dict[str, str], within: float = 10.0) -> str:
    with pytest.raises(SeatError) as caught:
        join(environ, within)
    assert caught.value.code == "E-RUN-046"
    return caught.value.text


def test_no_formation_in_the_environment_is_no_membership() -> None:
    assert join({}) is None


def test_a_channel_or_lifeline_without_the_formation_id_is_refused(
        pipe: tuple[int, int]) -> None:
    assert "without MURMUR_FORMATION_ID" in refusal(env(channel=pipe[0]))
    assert "without MURMUR_FORMATION_ID" in refusal(env(lifeline=pipe[0]))


def test_a_formation_id_that_is_not_one_is_refused() -> None:
    assert "not a formation id" in refusal(env(id="frm_nope"))


def test_a_channel_that_is_not_an_open_pipe_is_refused(tmp_path: Path) -> None:
    assert "not open" in refusal(env(id=FRM, channel=987))
    assert "standard streams" in refusal(env(id=FRM, channel=1))
    assert "not a file descriptor" in refusal(env(id=FRM, channel="three"))
    with (tmp_path / "plain").open("w") as plain:
        assert "not a pipe" in refusal(env(id=FRM, channel=plain.fileno()))


def test_no_first_line_in_time_is_refused(pipe: tuple[int, int]) -> None:
    os.write(pipe[1], b'{"formation_id": ')  # a line begun, never ended
    assert "no first line on the formation channel" in refusal(
        env(id=FRM, channel=pipe[0]), within=0.2)


def test_a_channel_closed_before_its_first_line_is_refused(pipe: tuple[int, int]) -> None:
    os.close(pipe[1])
    assert "closed before its first line" in refusal(env(id=FRM, channel=pipe[0]))


def test_a_seat_in_another_formation_is_refused(pipe: tuple[int, int]) -> None:
    os.write(pipe[1], seat_line(OTHER))
    text = refusal(env(id=FRM, channel=pipe[0]))
    assert OTHER in text and FRM in text
    assert "mft1" not in text


def test_the_seat_and_then_the_callees_urls_come_on_the_channel(
        pipe: tuple[int, int]) -> None:
    lifeline_read, lifeline_write = os.pipe()
    # both lines in one write: the first read holds the second line too, kept for later
    os.write(pipe[1], seat_line() + urls_line({"reviewer": "http://127.0.0.1:4000"}).encode())
    membership = join(env(id=FRM, channel=pipe[0], lifeline=lifeline_read))
    assert membership is not None and membership.seat is not None
    assert (membership.seat.member, membership.seat.callee_names) == ("coder", ("reviewer",))
    assert membership.warning is None
    membership.read_urls()
    assert membership.seat.url("reviewer", 0) == "http://127.0.0.1:4000"
    keys = record_keys(membership, {"pid": 7, "process_start": "9"})
    assert keys == {"formation_id": FRM, "formation_lifeline": True, "formation_member": "coder",
                    "formation_entry": False, "formation_launcher": {"pid": 7,
                                                                     "process_start": "9"}}
    os.close(lifeline_write)


def test_a_member_started_by_hand_is_warned_once_and_a_delegated_child_is_not() -> None:
    by_hand = join(env(id=FRM))
    assert by_hand is not None and by_hand.seat is None and by_hand.lifeline is None
    assert by_hand.warning is not None and "[W-RUN-007]" in by_hand.warning
    child = join(env(id=FRM, spawner='{"session_id": "ses_1"}'))
    assert child is not None and child.warning is None


def test_the_lifelines_end_winds_the_member_down_once(pipe: tuple[int, int]) -> None:
    steps: list[str] = []
    canceled = threading.Event()

    def cancel() -> None:
        steps.append("cancel")
        canceled.set()

    wind_down = WindDown(lambda: steps.append("tell"), lambda: steps.append("mark"), cancel,
                         lambda: steps.append("force"), within=60)
    watch(pipe[0], wind_down)
    assert not canceled.is_set()  # nothing ends while the launcher holds the write end
    os.close(pipe[1])
    block_until(canceled.is_set)
    wind_down()  # a second end is no second wind-down
    wind_down.done()
    assert steps == ["mark", "tell", "cancel"]


def test_telling_that_fails_still_winds_the_member_down() -> None:
    """A SIGKILLed launcher leaves the member's output a broken pipe: the wind-down goes on."""
    canceled, forced = threading.Event(), threading.Event()

    def tell() -> None:
        raise BrokenPipeError(32, "Broken pipe")

    wind_down = WindDown(tell, lambda: None, canceled.set, forced.set, within=0.05)
    wind_down()
    assert canceled.is_set()
    block_until(forced.is_set)  # and, not ended in time, it is forced out


def test_a_member_still_running_when_its_time_is_up_is_forced() -> None:
    forced = threading.Event()
    wind_down = WindDown(lambda: None, lambda: None, lambda: None, forced.set, within=0.05)
    wind_down()
    block_until(forced.is_set)
