"""Warm guest runners for the calls of stored turns, so a call does not pay for a new guest.

Starting a guest costs an instantiation and the guest reading its skills (milliseconds with the wasm
runner), against tens of microseconds for the call itself. A :class:`RunnerPool` keeps idle runners
under a key of the guest kind, the tenant and the digests of the bound releases: a runner serves
only calls whose guest would be built from exactly the same skills, for the same tenant.

A runner is checked out by one call at a time. Its :class:`~skillhouse.host.turn.TurnHost` is bound
to that call's ``fetch`` (the calling turn's gateway context) for the checkout and unbound after it.
A runner whose guest trapped or timed out (it restarted), or whose call raised, is discarded rather
than given back. The pool is bounded: at most ``per_key`` idle runners per key and ``keys`` keys,
the least recently used key's runners closed first.

What a warm guest keeps between calls is the tools a call loaded; no call's answer depends on them
(a call resolves its tool whether loaded or not), and they never cross tenants or skill sets. The
agent loop, whose offered tools do depend on them, starts a fresh guest per turn instead.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from skillhouse.compiler.release import release_digest
from skillhouse.host.runner import GuestRunner
from skillhouse.host.turn import Complete, Fetch, TurnHost
from skillhouse.json_types import ReleaseDocument

PoolKey = tuple[str, str, tuple[str, ...]]
"""Guest kind, tenant, and the digests of the bound releases in binding order."""

MakeRunner = Callable[[TurnHost, str], GuestRunner]


@dataclass
class PooledRunner:
    """A runner and the host it was built over (rebound per checkout)."""

    runner: GuestRunner
    host: TurnHost


def release_key(release: ReleaseDocument) -> str:
    """A release document's digest: the one it carries, or computed when it carries none."""
    digest = release.get("digest")
    return str(digest) if digest else release_digest(dict(release))


def _restarts(runner: GuestRunner) -> int:
    # only the wasm runner restarts its guest (after a trap or a timeout); in process there is nothing to restart
    return int(getattr(runner, "restarts", 0))


def _close(pooled: PooledRunner) -> None:
    close = getattr(pooled.runner, "close", None)
    if close is not None:
        close()


class RunnerPool:
    """At most ``per_key`` idle runners for each of at most ``keys`` keys, made by ``make`` when none is idle."""

    def __init__(self, make: MakeRunner, per_key: int = 4, keys: int = 32) -> None:
        self.make = make
        self.per_key = per_key
        self.keys = keys
        self.created = 0
        """Runners made so far (a checkout with none idle makes one)."""
        self.discarded = 0
        """Runners not given back: their guest restarted or their call raised."""
        self._idle: OrderedDict[PoolKey, list[PooledRunner]] = OrderedDict()
        self._lock = threading.Lock()

    def idle(self, key: PoolKey) -> int:
        with self._lock:
            return len(self._idle.get(key, []))

    def idle_total(self) -> int:
        """Warm runners waiting for a call, over every key (the guest pool's size on ``/metrics``)."""
        with self._lock:
            return sum(len(runners) for runners in self._idle.values())

    @contextmanager
    def checkout(
        self,
        kind: str,
        tenant: str,
        releases: Sequence[ReleaseDocument],
        fetch: Fetch,
        complete: Complete | None = None,
    ) -> Iterator[GuestRunner]:
        """A runner for ``tenant``'s ``releases`` whose host answers with ``fetch`` until the block ends."""
        key: PoolKey = (kind, tenant, tuple(release_key(r) for r in releases))
        pooled = self._take(key)
        if pooled is None:
            host = TurnHost(releases, fetch, complete)
            pooled = PooledRunner(self.make(host, kind), host)
            with self._lock:
                self.created += 1
        pooled.host.serve(fetch, complete)
        restarts = _restarts(pooled.runner)
        healthy = False
        try:
            yield pooled.runner
            healthy = _restarts(pooled.runner) == restarts
        finally:
            pooled.host.release()
            if healthy:
                self._give_back(key, pooled)
            else:
                with self._lock:
                    self.discarded += 1
                _close(pooled)

    def clear(self) -> None:
        """Close every idle runner."""
        with self._lock:
            idle = [pooled for runners in self._idle.values() for pooled in runners]
            self._idle.clear()
        for pooled in idle:
            _close(pooled)

    def _take(self, key: PoolKey) -> PooledRunner | None:
        with self._lock:
            runners = self._idle.get(key)
            if not runners:
                return None
            self._idle.move_to_end(key)
            return runners.pop()

    def _give_back(self, key: PoolKey, pooled: PooledRunner) -> None:
        closing: list[PooledRunner] = []
        with self._lock:
            runners = self._idle.setdefault(key, [])
            self._idle.move_to_end(key)
            if len(runners) < self.per_key:
                runners.append(pooled)
            else:
                closing.append(pooled)
            while len(self._idle) > self.keys:
                _, evicted = self._idle.popitem(last=False)
                closing.extend(evicted)
        for extra in closing:
            _close(extra)
