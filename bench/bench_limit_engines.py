"""Which engine should hold the rate limits replicas share: skillhouse's PostgreSQL rows, or Redis?

The same admission on both, the same limit semantics as ``skillhouse.gateway.limits`` (GCRA: ``requests``
per ``window_seconds``, a burst of ``requests`` at once, then one every ``window / requests``; a
``concurrent`` limit counts leases that expire; every applicable limit admits or none is charged):

- PostgreSQL: :meth:`RateLimits.admit` then :meth:`RateLimits.release` on a fresh schema of
  ``SKILLHOUSE_BENCH_POSTGRES_URL`` or ``SKILLHOUSE_TEST_POSTGRES_URL`` (as the tests make one);
- Redis: :class:`RedisLimits` below, one Lua script per admission (``EVALSHA``, atomic on the server,
  the server's clock) through redis-py, at ``SKILLHOUSE_BENCH_REDIS_URL`` (default ``redis://127.0.0.1:6379/0``);
  a lease is a member of a sorted set scored by its expiry, given back with ``ZREM``.

Measured per admission (admit, then release): wall latency of each call (median and p99 of every call
of every round) and CPU of the calling process (user + system, all its threads; the servers' own CPU is
not in it), one thread and :data:`THREADS` threads, under a rate limit and under a rate and a
concurrent-call limit. Rounds interleave the engines (the machine is shared). Before timing, each engine
must admit exactly N of a burst of 4 N from two "replicas" (two pools or clients) and :data:`THREADS`
threads, and exactly C calls at once under a concurrent-call limit of C; the section fails otherwise.
"""

from __future__ import annotations

import os
import resource
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

import redis
from tests.scratch import postgres_schema_url

from skillhouse.gateway.errors import RateLimited
from skillhouse.gateway.limits import RateLimit, RateLimits, checked_limit
from skillhouse.store.database import open_database

REDIS_URL = "redis://127.0.0.1:6379/0"
THREADS = 16
ROUNDS = 5
SINGLE_CALLS = 400
"""Admissions per round with one thread ..."""
THREADED_CALLS = 1600
"""... and with :data:`THREADS` (each takes its share)."""
NEVER_REFUSES = (1_000_000, 1.0)
"""A million a second: every timed call is admitted, and pays for it."""
BURST = 50
"""The N of the correctness check: N per hour, so the whole burst falls in one window."""

# KEYS: per limit its GCRA key and its lease set, then the lease counter. ARGV: per limit requests, window,
# concurrent (0: none), then the lease's seconds. Answers {1, lease ids...} or {0, seconds to wait}.
_ADMIT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local n = (#KEYS - 1) / 2
local lease_seconds = tonumber(ARGV[3 * n + 1])
local arrivals = {}
for i = 1, n do
  local requests, window, concurrent = tonumber(ARGV[3 * i - 2]), tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i])
  if requests > 0 then
    local tat = tonumber(redis.call('GET', KEYS[2 * i - 1]) or '0')
    local arrival = math.max(tat, now) + window / requests
    if arrival - window > now then
      return {0, string.format('%.6f', arrival - window - now)}
    end
    arrivals[i] = arrival
  end
  if concurrent > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[2 * i], '-inf', now)
    if redis.call('ZCARD', KEYS[2 * i]) >= concurrent then
      return {0, '1'}
    end
  end
end
local answer = {1}
for i = 1, n do
  if arrivals[i] then
    local ms = math.ceil((arrivals[i] - now) * 1000) + 1000
    redis.call('SET', KEYS[2 * i - 1], string.format('%.17g', arrivals[i]), 'PX', ms)
  end
  if tonumber(ARGV[3 * i]) > 0 then
    local id = redis.call('INCR', KEYS[#KEYS])
    redis.call('ZADD', KEYS[2 * i], now + lease_seconds, id)
    redis.call('PEXPIRE', KEYS[2 * i], math.ceil(lease_seconds * 1000) + 1000)
    answer[#answer + 1] = id
  end
end
return answer
"""


@dataclass(frozen=True)
class RedisAdmission:
    """The leases an admission took: (lease set, id) pairs, given back by :meth:`RedisLimits.release`."""

    leases: tuple[tuple[str, int], ...] = ()


@dataclass
class RedisLimits:
    """GCRA and call leases in Redis, one Lua script per admission. The limits themselves are held here (a
    real deployment would read them from the database, as ``RateLimits`` does)."""

    client: redis.Redis
    prefix: str
    limits: dict[str, list[RateLimit]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._admit = self.client.register_script(_ADMIT)

    def set(self, tenant: str, scope: str, subject: str, requests: int | None, window_seconds: float | None,
            concurrent: int | None = None) -> None:
        limit = checked_limit(scope, subject, requests, window_seconds, concurrent)
        kept = [old for old in self.limits.get(tenant, []) if (old.scope, old.subject) != (limit.scope, limit.subject)]
        self.limits[tenant] = sorted([*kept, limit], key=lambda one: (one.scope, one.subject))

    def admit(self, tenant: str, operation: str | None, host: str, lease_seconds: float = 60.0) -> RedisAdmission:
        """Charge every limit that applies, or none: :class:`RateLimited` when one refuses."""
        applying = [limit for limit in self.limits.get(tenant, []) if limit.scope == "tenant"
                    or (limit.scope == "host" and limit.subject == host)
                    or (limit.scope == "operation" and limit.subject == operation)]
        if not applying:
            return RedisAdmission()
        base = f"{self.prefix}:{{{tenant}}}"  # one hash slot per tenant: a cluster runs the script on one node
        keys: list[str] = []
        args: list[float] = []
        for limit in applying:
            keys += [f"{base}:rate:{limit.scope}:{limit.subject}", f"{base}:leases:{limit.scope}:{limit.subject}"]
            args += [limit.requests or 0, limit.window_seconds or 0.0, limit.concurrent or 0]
        answer = self._admit(keys=[*keys, f"{base}:lease-ids"], args=[*args, lease_seconds])
        if not answer[0]:
            raise RateLimited("a limit is reached; nothing was sent", max(1, int(float(answer[1]) + 0.999999)), tenant)
        sets = [keys[2 * i + 1] for i, limit in enumerate(applying) if limit.concurrent]
        return RedisAdmission(tuple(zip(sets, (int(lease) for lease in answer[1:]), strict=True)))

    def release(self, admission: RedisAdmission) -> None:
        for key, lease in admission.leases:
            self.client.zrem(key, lease)

    def forget(self) -> None:
        """Delete every key of this prefix."""
        for key in self.client.scan_iter(match=f"{self.prefix}:*", count=1000):
            self.client.delete(key)


def redis_url() -> str:
    return os.environ.get("SKILLHOUSE_BENCH_REDIS_URL") or REDIS_URL


def redis_client(url: str | None = None) -> redis.Redis:
    return redis.Redis.from_url(url or redis_url(), socket_timeout=5)


def postgres_url() -> str | None:
    return os.environ.get("SKILLHOUSE_BENCH_POSTGRES_URL") or os.environ.get("SKILLHOUSE_TEST_POSTGRES_URL")


class Engine:
    """One engine's limits as the bench drives them: two replicas (pools or clients) of the same store."""

    def __init__(self, name: str, replicas: Sequence[RateLimits | RedisLimits]) -> None:
        self.name = name
        self.replicas = replicas

    def set(self, tenant: str, scope: str, subject: str, requests: int | None, window: float | None,
            concurrent: int | None = None) -> None:
        for replica in self.replicas:  # the rows are shared; each Redis replica holds its own copy of the limits
            if isinstance(replica, RedisLimits) or replica is self.replicas[0]:
                replica.set(tenant, scope, subject, requests, window, concurrent)

    def admit(self, replica: int, tenant: str, host: str) -> Callable[[], None]:
        """Admit one call on that replica (:class:`RateLimited` when refused); answers how to release it."""
        limits = self.replicas[replica]
        if isinstance(limits, RedisLimits):
            taken = limits.admit(tenant, "bench.op", host)
            return lambda: limits.release(taken)
        admission = limits.admit(tenant, "bench.op", host)
        return lambda: limits.release(admission)

    def admitted(self, tenant: str, host: str, attempts: int, *, release: bool) -> int:
        """How many of ``attempts`` calls at once (:data:`THREADS` threads over the replicas) were admitted."""
        count = [0]
        lock = threading.Lock()

        def call(n: int) -> None:
            try:
                given_back = self.admit(n % len(self.replicas), tenant, host)
            except RateLimited:
                return
            with lock:
                count[0] += 1
            if release:
                given_back()

        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(call, range(attempts)))
        return count[0]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Seen:
    """Every call's wall seconds, and each round's CPU µs per admission."""

    walls: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)

    def row(self) -> tuple[float, float, float, float]:
        walls = sorted(self.walls)
        p99 = walls[min(len(walls) - 1, int(0.99 * len(walls)))]
        return (statistics.median(walls) * 1e6, p99 * 1e6, statistics.median(self.cpu), statistics.median(self.rates))


def _round(call: Callable[[], None], threads: int, calls: int, seen: Seen) -> None:
    walls: list[list[float]] = [[] for _ in range(threads)]

    def worker(index: int) -> None:
        mine = walls[index]
        for _ in range(calls // threads):
            start = time.perf_counter()
            call()
            mine.append(time.perf_counter() - start)

    cpu, wall = _cpu(), time.perf_counter()
    if threads == 1:
        worker(0)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(worker, range(threads)))
    elapsed = time.perf_counter() - wall
    done = calls // threads * threads
    seen.cpu.append((_cpu() - cpu) / done * 1e6)
    seen.rates.append(done / elapsed)
    for one in walls:
        seen.walls.extend(one)


@contextmanager
def engines(postgres: str) -> Iterator[list[Engine]]:
    """PostgreSQL (a fresh schema of ``postgres``, two pools) and Redis (a fresh key prefix, two clients)."""
    prefix = f"skh-bench-{uuid.uuid4().hex[:10]}"
    clients = [redis_client(), redis_client()]
    clients[0].ping()
    redis_limits = [RedisLimits(client, prefix) for client in clients]
    with postgres_schema_url(postgres) as url:
        databases = [open_database(url), open_database(url)]
        try:
            yield [Engine("PostgreSQL", [RateLimits(database) for database in databases]),
                   Engine("Redis", redis_limits)]
        finally:
            for database in databases:
                database.dispose()
            redis_limits[0].forget()
            for client in clients:
                client.close()


def check(engine: Engine) -> tuple[int, int]:
    """(admitted of a burst of 4 N under N per hour, calls at once admitted under a concurrent limit of N)."""
    engine.set("burst", "tenant", "", BURST, 3600.0)
    rate = engine.admitted("burst", "a.example", 4 * BURST, release=True)
    engine.set("held", "host", "b.example", None, None, concurrent=BURST)
    held = engine.admitted("held", "b.example", 4 * BURST, release=False)
    return rate, held


KINDS = {"rate limit": "rate.example", "rate + concurrent-call limit": "leased.example"}


TITLE = "## Rate-limit engines: PostgreSQL rows against a Redis Lua script"


def run() -> str:
    postgres = postgres_url()
    if postgres is None:
        return f"{TITLE}\n\nNot run: SKILLHOUSE_TEST_POSTGRES_URL (or SKILLHOUSE_BENCH_POSTGRES_URL) is unset.\n"
    results: dict[tuple[str, str, int], Seen] = {}
    checks: dict[str, tuple[int, int]] = {}
    with engines(postgres) as found:
        for engine in found:
            checks[engine.name] = check(engine)
            engine.set("bench", "tenant", "", *NEVER_REFUSES)
            engine.set("bench", "host", "leased.example", *NEVER_REFUSES, concurrent=1_000_000)
        wrong = {name: got for name, got in checks.items() if got != (BURST, BURST)}
        assert not wrong, f"an engine admitted other than exactly {BURST} (rate, at once): {wrong}"

        def call(engine: Engine, host: str) -> Callable[[], None]:
            return lambda: engine.admit(0, "bench", host)()

        plan = [(engine, kind, threads) for threads in (1, THREADS) for kind in KINDS for engine in found]
        for engine, kind, threads in plan:  # warm pools, connections, prepared statements and the script cache
            _round(call(engine, KINDS[kind]), threads, 4 * THREADS, Seen())
        for _ in range(ROUNDS):
            for engine, kind, threads in plan:
                seen = results.setdefault((engine.name, kind, threads), Seen())
                _round(call(engine, KINDS[kind]), threads, SINGLE_CALLS if threads == 1 else THREADED_CALLS, seen)
        redis_version = redis_client().info("server")["redis_version"]
    lines = [
        TITLE,
        "",
        f"The same GCRA admission (and call leases) on skillhouse's PostgreSQL rows (`RateLimits.admit` then "
        f"`release`) and on Redis {redis_version} (one Lua script per admission through redis-py, `ZREM` to give a "
        f"lease back), both on loopback. Wall µs of every call (median and p99 over {ROUNDS} interleaved rounds of "
        f"{SINGLE_CALLS} admissions with one thread, {THREADED_CALLS} with {THREADS}); CPU µs of the calling "
        "process per admission and admissions per second (medians of the rounds). The servers' own CPU is not "
        "counted.",
        "",
        "| engine | limits | threads | wall µs median | wall µs p99 | caller CPU µs | admissions/s |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for (name, kind, threads), seen in sorted(results.items(), key=lambda item: (item[0][2], item[0][1], item[0][0])):
        median, p99, cpu, rate = seen.row()
        lines.append(f"| {name} | {kind} | {threads} | {median:,.0f} | {p99:,.0f} | {cpu:,.0f} | {rate:,.0f} |")
    lines += [
        "",
        f"Correctness, before timing: a limit of {BURST} per hour and a burst of {4 * BURST} calls from "
        f"{THREADS} threads over two replicas (two pools, two clients); a limit of {BURST} calls at once and "
        f"{4 * BURST} calls that keep their lease.",
        "",
        "| engine | admitted of the burst | admitted at once |",
        "|---|---:|---:|",
        *(f"| {name} | {rate} of {BURST} | {held} of {BURST} |" for name, (rate, held) in checks.items()),
        "",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(run())
