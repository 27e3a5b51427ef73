"""A group commit's batch held open, so that writes handed in meanwhile are committed together in the next one."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

from skillhouse.store.group_commit import GroupCommit
from skillhouse.store.prepared import DriverTransaction

T = TypeVar("T")
WAIT_SECONDS = 10.0


@contextmanager
def batch_held_open(group: GroupCommit) -> Iterator[Callable[[Callable[[], T]], Future[T]]]:
    """A batch (writing nothing) whose transaction stays open inside the block. The function yielded runs a
    call that hands one write to ``group`` in a thread of its own, and returns once that write is queued:
    writes handed in so queue in that order and commit together in the next batch, after the block."""
    inside, leave = threading.Event(), threading.Event()

    def hold(_: DriverTransaction) -> None:
        inside.set()
        assert leave.wait(WAIT_SECONDS)

    with ThreadPoolExecutor(8) as pool:
        first = pool.submit(group.write, hold)
        assert inside.wait(WAIT_SECONDS)

        def hand_in(call: Callable[[], T]) -> Future[T]:
            before = group.queued()
            handed = pool.submit(call)
            deadline = time.monotonic() + WAIT_SECONDS
            while group.queued() == before:  # handed in one at a time: they queue in this order
                assert time.monotonic() < deadline, "the write never queued"
                time.sleep(0.001)
            return handed

        try:
            yield hand_in
        finally:
            leave.set()
        first.result(WAIT_SECONDS)
