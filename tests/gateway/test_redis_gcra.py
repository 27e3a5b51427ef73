"""The Redis admission that ``bench/bench_limit_engines.py`` measures against PostgreSQL keeps the same limits.

It runs on the Redis at ``SKILLHOUSE_BENCH_REDIS_URL`` (default ``redis://127.0.0.1:6379/0``), which this
machine and CI always run: an unreachable Redis fails these tests. Each test uses its own key prefix and
deletes its keys.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
from bench.bench_limit_engines import RedisAdmission, RedisLimits, redis_client, redis_url

from skillhouse.gateway.errors import RateLimited


@pytest.fixture
def replicas() -> Iterator[list[RedisLimits]]:
    """Two replicas (two clients) on one fresh key prefix."""
    prefix = f"skh-test-{uuid.uuid4().hex[:10]}"
    clients = [redis_client(), redis_client()]
    try:
        clients[0].ping()
    except redis.ConnectionError as error:
        pytest.fail(f"Redis is required at {redis_url()} (it runs on this machine and in CI): {error}")
    limits = [RedisLimits(client, prefix) for client in clients]
    try:
        yield limits
    finally:
        limits[0].forget()
        for client in clients:
            client.close()


def _burst(replicas: list[RedisLimits], tenant: str, host: str, attempts: int) -> list[RedisAdmission]:
    admitted: list[RedisAdmission] = []
    lock = threading.Lock()

    def call(n: int) -> None:
        try:
            admission = replicas[n % len(replicas)].admit(tenant, "shop.order", host)
        except RateLimited:
            return
        with lock:
            admitted.append(admission)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(call, range(attempts)))
    return admitted


def test_a_burst_from_two_replicas_admits_exactly_n(replicas: list[RedisLimits]) -> None:
    for replica in replicas:
        replica.set("t1", "tenant", "", 20, 3600.0)
    assert len(_burst(replicas, "t1", "a.example", 80)) == 20
    with pytest.raises(RateLimited) as refused:
        replicas[0].admit("t1", "shop.order", "a.example")
    assert 170 <= refused.value.retry_after <= 180  # one interval (3600 s / 20) after the burst began
    # another tenant's limit is its own
    for replica in replicas:
        replica.set("t2", "tenant", "", 1, 3600.0)
    assert len(_burst(replicas, "t2", "a.example", 5)) == 1


def test_a_refusing_limit_charges_none_of_the_others(replicas: list[RedisLimits]) -> None:
    limits = replicas[0]
    limits.set("t1", "tenant", "", 3, 3600.0)
    limits.set("t1", "host", "slow.example", 1, 3600.0)
    limits.admit("t1", "shop.order", "slow.example")
    for _ in range(5):
        with pytest.raises(RateLimited):
            limits.admit("t1", "shop.order", "slow.example")
    # the tenant-wide limit was charged once: two calls to another host still pass, the third does not
    limits.admit("t1", "shop.order", "other.example")
    limits.admit("t1", "shop.order", "other.example")
    with pytest.raises(RateLimited):
        limits.admit("t1", "shop.order", "other.example")


def test_a_concurrent_limit_holds_exactly_c_in_flight(replicas: list[RedisLimits]) -> None:
    for replica in replicas:
        replica.set("t1", "host", "b.example", None, None, concurrent=5)
    held = _burst(replicas, "t1", "b.example", 30)
    assert len(held) == 5 and all(len(admission.leases) == 1 for admission in held)
    with pytest.raises(RateLimited) as refused:
        replicas[1].admit("t1", "shop.order", "b.example")
    assert refused.value.retry_after == 1
    replicas[0].release(held[0])
    replicas[1].admit("t1", "shop.order", "b.example")
    with pytest.raises(RateLimited):
        replicas[0].admit("t1", "shop.order", "b.example")


def test_a_dead_replicas_leases_expire(replicas: list[RedisLimits]) -> None:
    limits = replicas[0]
    limits.set("t1", "host", "b.example", None, None, concurrent=1)
    limits.admit("t1", "shop.order", "b.example", lease_seconds=0.0)  # never given back, already expired
    limits.admit("t1", "shop.order", "b.example")
