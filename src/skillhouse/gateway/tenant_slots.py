"""A bounded number of upstream calls in flight per tenant, in this process.

A tenant's calls take a slot for exactly the time they are on the wire (around the send, after the
idempotency key is claimed). A tenant whose upstream hangs fills its own slots and no more: its next
call waits a short while for a slot, then is refused ``tenant-busy`` with nothing sent, and the
pipeline releases the key it had claimed and gives back the approval it had used, as for any
failure before the first byte. Other tenants' calls, and every API request that does not reach an
upstream, never wait on those slots. The count is per process: replicas each allow the limit.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from skillhouse.gateway.upstream import NotSent


class TenantSlots:
    """``limit`` concurrent upstream calls per tenant; a call waits at most ``wait_seconds`` for a slot."""

    def __init__(self, limit: int = 16, wait_seconds: float = 2.0) -> None:
        if limit < 1:
            raise ValueError("a tenant needs at least one upstream slot")
        self.limit = limit
        self.wait_seconds = wait_seconds
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._lock = threading.Lock()

    def _semaphore(self, tenant: str) -> threading.BoundedSemaphore:
        with self._lock:
            semaphore = self._slots.get(tenant)
            if semaphore is None:
                semaphore = self._slots[tenant] = threading.BoundedSemaphore(self.limit)
            return semaphore

    @contextmanager
    def hold(self, tenant: str) -> Iterator[None]:
        """A slot of ``tenant``'s for the body of the ``with``; :class:`NotSent` ``tenant-busy`` when none frees up."""
        semaphore = self._semaphore(tenant)
        if not semaphore.acquire(timeout=self.wait_seconds):
            raise NotSent(
                f"tenant {tenant} already has {self.limit} upstream calls in flight; nothing was sent: "
                "retry when one of them has finished",
                code="tenant-busy",
            )
        try:
            yield
        finally:
            semaphore.release()
