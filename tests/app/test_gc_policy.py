"""The screen's collection policy (tui/app/gc_policy.py): a full collection that costs more
than FREEZE_ABOVE_SECONDS freezes what survived it, so the next ones walk only what is younger;
a cycle that died once frozen is reclaimed by a thaw, which a quiet spell brings."""

from __future__ import annotations

import asyncio
import gc
import time
import weakref
from collections.abc import Callable, Iterator

import pytest

from tui.app import gc_policy
from tui.app.gc_policy import GcPolicy


class Cycle:
    def __init__(self) -> None:
        self.me = self


def at_once(callback: Callable[[], None]) -> bool:
    """`after_frame` with no screen: the frame is taken as drawn now."""
    callback()
    return True


@pytest.fixture
def policy() -> Iterator[GcPolicy]:
    made = GcPolicy(at_once)
    made.start()
    try:
        yield made
    finally:
        made.stop()


async def collected(policy: GcPolicy, count: int) -> None:
    policy.last_full = 0.0  # a collection is due at the next batch
    policy.activity()
    deadline = time.monotonic() + 10
    while policy.full_collections < count:
        assert time.monotonic() < deadline, "no collection came after the frame"
        await asyncio.sleep(0.005)


async def test_a_costly_collection_freezes_its_survivors_and_a_quiet_spell_thaws_them(
        policy: GcPolicy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gc_policy, "FREEZE_ABOVE_SECONDS", 0.0)  # every collection "costs"
    kept = [Cycle() for _ in range(1000)]
    frozen = gc.get_freeze_count()
    await collected(policy, 1)
    assert policy.frozen_since_thaw == 1
    assert gc.get_freeze_count() >= frozen + len(kept)  # out of the next collections' walk
    dead = weakref.ref(kept[0])
    kept.clear()
    gc.collect()
    assert dead() is not None  # a cycle that died frozen: kept until a thaw
    policy.tick()  # busy a moment ago: no thaw yet
    assert dead() is not None and policy.frozen_since_thaw == 1
    policy.last_activity = time.monotonic() - gc_policy.THAW_QUIET_SECONDS
    policy.tick()
    assert dead() is None
    assert policy.trapped >= 1000 and policy.frozen_since_thaw == 0


async def test_a_cheap_collection_freezes_nothing(policy: GcPolicy,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gc_policy, "FREEZE_ABOVE_SECONDS", float("inf"))
    cycle = Cycle()
    await collected(policy, 1)
    assert policy.frozen_since_thaw == 0
    dead = weakref.ref(cycle)
    del cycle
    gc.collect()
    assert dead() is None  # never frozen: the next collection reclaims it


async def test_a_screen_never_quiet_is_thawed_every_thaw_busy_seconds(
        policy: GcPolicy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gc_policy, "FREEZE_ABOVE_SECONDS", 0.0)
    kept = [Cycle()]
    await collected(policy, 1)
    dead = weakref.ref(kept.pop())
    policy.activity()  # busy all along
    policy.tick()
    assert dead() is not None
    policy.last_thaw = time.monotonic() - gc_policy.THAW_BUSY_SECONDS
    policy.tick()
    assert dead() is None


def test_settle_freezes_what_was_just_built_and_collects_the_young_first(
        policy: GcPolicy) -> None:
    built = [Cycle() for _ in range(1000)]
    garbage = Cycle()
    dead = weakref.ref(garbage)
    del garbage
    frozen = gc.get_freeze_count()
    policy.settle()
    assert dead() is None  # young garbage is reclaimed before the freeze
    assert gc.get_freeze_count() >= frozen + len(built)
    assert policy.frozen_since_thaw == 1
