"""The guest's epoch clock: it ticks while a guest call runs, sleeps when none has for a while, and a
call that starts wakes it, however calls from several threads come and go (enter and leave take no lock)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from skillhouse.host.wasm_build import make_engine
from skillhouse.host.wasm_clock import EpochClock


def eventually(condition: Callable[[], bool], within: float = 10.0) -> bool:
    """Whether ``condition`` holds within ``within`` seconds (a bound for a loaded machine, not a timing)."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def ticking(clock: EpochClock) -> bool:
    start = clock.ticks
    return eventually(lambda: clock.ticks > start + 2)


def asleep(clock: EpochClock) -> bool:
    """The clock has stopped: no tick for many ticks' time (it sleeps once idle past its linger)."""

    def still() -> bool:
        seen = clock.ticks
        time.sleep(clock.tick * 20)
        return clock.ticks == seen

    return eventually(still)


def test_the_clock_ticks_during_a_call_sleeps_after_and_the_next_call_wakes_it() -> None:
    clock = EpochClock(make_engine(), tick=0.001, linger=0.005)
    clock.enter()
    assert ticking(clock)
    clock.leave()
    assert asleep(clock)
    clock.enter()
    assert ticking(clock)
    clock.leave()


def test_calls_coming_and_going_on_many_threads_never_leave_a_call_without_ticks() -> None:
    clock = EpochClock(make_engine(), tick=0.001, linger=0.002)

    def calls() -> None:
        for _ in range(2000):
            clock.enter()
            clock.leave()

    for _ in range(5):
        threads = [threading.Thread(target=calls) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert asleep(clock)  # every call left: the count is back to none
        clock.enter()
        assert ticking(clock)
        clock.leave()
