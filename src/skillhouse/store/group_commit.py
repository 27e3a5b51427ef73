"""SQLite: concurrent write transactions committed together, each caller waiting until its own is committed.

On SQLite the gateway's writes per request (the idempotency claim, the completion, an audit row) are a
few in-process statements each, and their ``COMMIT`` costs more than all of them: it appends every page
the transaction changed to the WAL, and the next commit appends the same hot pages again (the key
index's leaf, the audit table's last page). Under many client threads, which queue for SQLite's single
writer lock anyway, one transaction for every write waiting at that moment does the same writes with one
``BEGIN IMMEDIATE`` and one ``COMMIT`` (bench/bench_gateway.py).

Nothing about what a caller sees changes: :meth:`GroupCommit.write` returns only once the transaction
holding its work has committed (a claim is as durable before the request is sent as it was alone), and
a work that raises leaves nothing: the batch is rolled back and its other works run again, without it,
in a new transaction, and the one that raised raises to its own caller; a ``COMMIT`` that refuses (a
deferred constraint, the disk) has every work of it run again alone, each in its own transaction. A
work is therefore statements only, run on the transaction it is given, with no effect outside it. Where
no transaction can be had at all (the write lock not within SQLite's busy timeout, no connection), every
work waiting fails with that error, none run again. Works in a
batch run in the order they were handed in, so two claims of one key still see each other: the second
finds the first's row.

The protocol is a leader's: the caller that finds no batch being committed commits every work queued
by then (its own included); callers arriving meanwhile queue, and when the leader's commit is done the
first of them leads the next batch. No thread of its own, and nothing waits once the queue is empty.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

from skillhouse.store.database import Database
from skillhouse.store.prepared import DriverTransaction, writing

T = TypeVar("T")


class _Work(Generic[T]):
    """One caller's work: what it returned or raised, and the lock its caller waits on."""

    __slots__ = ("error", "leads", "result", "run", "turn")

    def __init__(self, run: Callable[[DriverTransaction], T]) -> None:
        self.run = run
        self.result: T | None = None
        self.error: BaseException | None = None
        # held until the work is committed (or failed), or until its caller is to lead the next batch: a
        # bare lock is the cheapest wait threading has (an Event is a Condition over one)
        self.turn = threading.Lock()
        self.turn.acquire()
        self.leads = False


class GroupCommit:
    """One database's queue of writes committed together (module docstring)."""

    def __init__(self, database: Database) -> None:
        # weakly: the database's own group is kept in a mapping keyed weakly by the database (group_commit)
        self._database = weakref.ref(database)
        self._lock = threading.Lock()
        self._queue: list[_Work[Any]] = []
        self._leading = False

    def write(self, run: Callable[[DriverTransaction], T]) -> T:
        """``run`` on a write transaction shared with the writes queued beside it; its result once committed."""
        work = _Work(run)
        with self._lock:
            self._queue.append(work)
            if not self._leading:
                self._leading = work.leads = True
        if not work.leads:
            work.turn.acquire()  # released when committed, or when this caller is to lead
        if work.leads:
            self._lead()
        if work.error is not None:
            raise work.error
        return cast(T, work.result)  # set by the commit

    def queued(self) -> int:
        """How many writes wait for the next batch (the one being committed not counted)."""
        with self._lock:
            return len(self._queue)

    def _lead(self) -> None:
        with self._lock:
            batch, self._queue = self._queue, []
        try:
            self._commit(batch)
        finally:
            with self._lock:
                if self._queue:
                    successor = self._queue[0]
                    successor.leads = True
                    successor.turn.release()
                else:
                    self._leading = False
            for work in batch:
                if not work.leads:
                    work.turn.release()

    def _commit(self, batch: list[_Work[Any]]) -> None:
        database = self._database()
        pending = batch
        if database is None:  # never while its writers hold it
            for work in pending:
                work.error = RuntimeError("the database of this group commit is gone")
            return
        while pending:
            begun, running = False, None
            try:
                with writing(database) as transaction:
                    begun = True
                    for running in pending:
                        running.result = running.run(transaction)
                    running = None
                return
            except BaseException as error:
                if running is not None:
                    # rolled back: the work that raised answers its caller, the others commit without it
                    running.error = error
                    pending = [work for work in pending if work is not running]
                    continue
                if not begun or len(pending) == 1:
                    # no transaction (the lock or a connection could not be had): running the works again
                    # would only wait for the same failure
                    for work in pending:
                        work.error = error
                    return
                # the COMMIT refused (a deferred constraint, the disk): whose write it refused is unknown
                for work in pending:
                    self._commit_alone(database, work)
                return

    @staticmethod
    def _commit_alone(database: Database, work: _Work[Any]) -> None:
        try:
            with writing(database) as transaction:
                work.result = work.run(transaction)
        except BaseException as error:
            work.error = error


_GROUPS: weakref.WeakKeyDictionary[Database, GroupCommit] = weakref.WeakKeyDictionary()
_GROUPS_LOCK = threading.Lock()


def group_commit(database: Database) -> GroupCommit:
    """The database's one :class:`GroupCommit`: every writer of the database shares its batches."""
    with _GROUPS_LOCK:
        group = _GROUPS.get(database)
        if group is None:
            group = _GROUPS[database] = GroupCommit(database)
        return group
