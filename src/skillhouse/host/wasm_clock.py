"""The guest's clock: how long guest code may run per call, enforced by wasmtime's epoch interruption.

One :class:`EpochClock` serves every runner of an engine. Its thread advances the engine's epoch
every ``tick`` seconds while at least one guest call is in progress, and sleeps otherwise. Each call
has a :class:`GuestBudget` of ticks: the store's epoch deadline is that many ticks ahead when the
call starts. Time the host spends on the guest's behalf (a model's answer, an upstream's response)
is not the guest's: on return from a host function the deadline is set again to the ticks the
guest has left, so only ticks that passed while guest code ran count.

Epochs are engine-wide, so a per-store deadline, not a per-runner clock, is what keeps one runaway
guest from stopping another runner's guest.
"""

from __future__ import annotations

import math
import threading
import time

import wasmtime

from skillhouse.host.wasm_calls import set_epoch_deadline

DEFAULT_TICK = 0.01


class EpochClock:
    """Advances ``engine``'s epoch every ``tick`` seconds while guest calls run, counting the ticks.

    The thread keeps ticking for ``linger`` seconds after the last call left before it sleeps:
    waking it costs a thread switch, which back-to-back calls should not pay each time.
    """

    def __init__(self, engine: wasmtime.Engine, tick: float = DEFAULT_TICK, linger: float = 1.0) -> None:
        self.tick = tick
        self.ticks = 0
        self._engine = engine
        self._idle_limit = max(1, math.ceil(linger / tick))
        # one item per guest call in progress: appending and popping are atomic, so a call pays no lock
        self._calls: list[None] = []
        self._sleeping = False
        self._waking = threading.Lock()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="guest-epoch-clock", daemon=True)
        self._thread.start()

    def ticks_for(self, seconds: float) -> int:
        return max(1, math.ceil(seconds / self.tick))

    def enter(self) -> None:
        """A guest call starts: the clock runs until every call has left."""
        self._calls.append(None)
        # read after the call is counted; the thread marks itself sleeping before it looks at the count
        # a last time, so either this sees it sleeping and wakes it, or it sees this call and stays up
        if self._sleeping:
            with self._waking:
                self._sleeping = False
                self._wake.set()

    def leave(self) -> None:
        self._calls.pop()

    def _run(self) -> None:
        idle = 0
        while True:
            time.sleep(self.tick)
            if self._calls:
                idle = 0
                self.ticks += 1  # before the epoch moves, so a trap it causes always sees the count
                self._engine.increment_epoch()
                continue
            idle += 1
            if idle < self._idle_limit:
                continue
            with self._waking:
                self._sleeping = True
                self._wake.clear()
            if not self._calls:
                self._wake.wait()
            with self._waking:
                self._sleeping = False
            idle = 0


class GuestBudget:
    """The ticks one export call's guest code may run, paused while the host works for it.

    ``context`` is the address of the store's context (:func:`~skillhouse.host.wasm_calls.context_address`).
    """

    def __init__(self, clock: EpochClock, context: int, timeout: float) -> None:
        self.clock = clock
        self.allowed = clock.ticks_for(timeout)
        self.used = 0
        self._context = context
        self._since = 0
        self._entered = 0
        self._full_since = -1  # the tick at which the store's deadline was last set to the whole budget

    def start(self) -> None:
        self.used = 0
        self.clock.enter()
        # counted from before the deadline is set, so a tick between the two can only add to ``used``
        self._since = self.clock.ticks
        if self._since != self._full_since:
            # within one tick of the last whole-budget deadline the epoch has not moved: that deadline stands
            set_epoch_deadline(self._context, self.allowed)
            self._full_since = self._since

    def stop(self) -> None:
        self.used += self.clock.ticks - self._since
        self.clock.leave()

    def host_entered(self, _context: int) -> None:
        self._entered = self.clock.ticks
        self.used += self._entered - self._since

    def host_left(self, context: int) -> None:
        self._since = self.clock.ticks
        if self._since != self._entered:  # the epoch moved while the host worked: those ticks were not the guest's
            set_epoch_deadline(context, max(1, self.allowed - self.used))
            self._full_since = -1

    @property
    def exhausted(self) -> bool:
        return self.used >= self.allowed
