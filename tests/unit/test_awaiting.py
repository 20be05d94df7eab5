"""A task waits for every call and delegation it started, then takes all that arrived."""

from __future__ import annotations

import threading

from tui.core.cancel import CancelToken
from tui.core.formation.awaiting import Arrival, Awaiting


def _answer(ident: str, kind: str = "member") -> Arrival:
    return Arrival(kind, ident, "coder", "completed", f"answer of {ident}")  # type: ignore[arg-type]


def test_waits_for_every_outstanding_id_then_member_answers_come_first() -> None:
    awaiting = Awaiting()
    awaiting.expect("tsk_1", "dlg_1", "delegation")
    awaiting.expect("tsk_1", "mcl_1", "member")
    awaiting.expect("tsk_1", "mcl_2", "member")
    got: list[list[Arrival]] = []
    waiter = threading.Thread(target=lambda: got.append(awaiting.wait("tsk_1", CancelToken())))
    waiter.start()
    assert awaiting.arrive("tsk_1", _answer("dlg_1", "delegation"))
    assert awaiting.arrive("tsk_1", _answer("mcl_2"))
    assert awaiting.outstanding("tsk_1") == 1
    assert awaiting.arrive("tsk_1", _answer("mcl_1"))
    waiter.join(timeout=30)
    assert [a.ident for a in got[0]] == ["mcl_2", "mcl_1", "dlg_1"]
    assert awaiting.outstanding("tsk_1") == 0 and awaiting.arrived("tsk_1") == 0


def test_an_unexpected_or_repeated_arrival_is_refused() -> None:
    awaiting = Awaiting()
    assert not awaiting.arrive("tsk_1", _answer("mcl_9"))
    awaiting.expect("tsk_1", "mcl_9", "member")
    assert awaiting.arrive("tsk_1", _answer("mcl_9"))
    assert not awaiting.arrive("tsk_1", _answer("mcl_9"))


def test_cancel_ends_the_wait_and_drop_names_what_was_abandoned() -> None:
    awaiting, cancel = Awaiting(), CancelToken()
    awaiting.expect("tsk_1", "mcl_1", "member")
    got: list[list[Arrival]] = []
    waiter = threading.Thread(target=lambda: got.append(awaiting.wait("tsk_1", cancel)))
    waiter.start()
    cancel.set()
    waiter.join(timeout=30)
    assert got == [[]]
    assert awaiting.drop("tsk_1") == ["mcl_1"]
    assert awaiting.outstanding("tsk_1") == 0
