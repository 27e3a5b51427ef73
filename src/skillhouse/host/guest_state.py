"""The guest a server runs its calls in, made ready in the background: building, ready or failed.

Building the wasm component takes minutes the first time (componentize-py, then wasmtime's compile);
after that the cache makes it a fraction of a second. A server must neither spend those minutes inside
a request nor fall back to running the guest outside its sandbox, so a :class:`GuestState` builds on a
thread of its own from start-up, logging each stage and how long it has run, and answers every call's
:meth:`GuestState.require` with the ready guest or :class:`GuestNotReady`: ``guest-building`` (retry
after a while) or ``guest-unavailable`` (the build failed; its error says why). The in-process guest
runs only when asked for by name (``SKILLHOUSE_GUEST=inprocess``).

A call that arrives while the cache is merely being read (no build step announced) waits for it, up to
``settle_seconds``, so a server restarted on a warm cache never turns a call away.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from skillhouse.errors import Signal, SkillhouseError, Unavailable
from skillhouse.host.runner import RUNNER_KINDS, GuestRunner, InProcessRunner, RunnerKind, UnknownRunner
from skillhouse.host.runner_pool import RunnerPool
from skillhouse.host.turn import TurnHost

if TYPE_CHECKING:
    from skillhouse.host.wasm_runner import LoadedComponent

Progress = Callable[[str], None]
Load = Callable[[Progress], "LoadedComponent"]
"""Makes the component ready, telling ``progress`` before each slow step (the seam tests hold)."""

log = logging.getLogger("skillhouse.guest")


class GuestNotReady(SkillhouseError):
    """No call can run in the guest now; a module base, not a family: :class:`GuestBuilding` (come back
    later) or :class:`GuestBuildFailed` (an operator must act)."""

    code = "guest-unavailable"

    def __init__(self, code: str, message: str, retry_after: int | None = None) -> None:
        super().__init__(message, code=code)
        self.retry_after = retry_after


GuestPhase = Literal["starting", "building", "ready", "failed"]


class GuestBuilding(GuestNotReady, Signal):
    """Not an error: the guest is still being built (``guest-building``); call again after ``retry_after`` seconds."""

    code = "guest-building"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__("guest-building", message, retry_after)


class GuestBuildFailed(GuestNotReady, Unavailable):
    """The guest could not be built (``guest-unavailable``); the message holds the build's error. Calls fail
    until an operator fixes it and restarts (``skillhouse guest build`` shows the error again)."""

    code = "guest-unavailable"

    def __init__(self, message: str) -> None:
        super().__init__("guest-unavailable", message)


@dataclass(frozen=True)
class GuestStatus:
    """Where the guest is: ``state`` is ``starting``, ``building``, ``ready`` or ``failed``."""

    kind: RunnerKind
    state: GuestPhase
    stage: str | None
    """The build step under way (``building``), else ``None``."""
    message: str | None
    """Why it failed (``failed``), else ``None``."""
    elapsed_seconds: float
    """Since the build started; how long it took once it is over."""


def _load_agent(cache_dir: Path | None) -> Load:
    def load(progress: Progress) -> LoadedComponent:
        # imported here so wasmtime loads only in processes that run the component
        from skillhouse.host.wasm_runner import loaded_component

        return loaded_component(cache_dir=cache_dir, progress=progress)

    return load


class GuestState:
    """One server's guest of ``kind``; ``load`` makes a wasm guest ready (the agent component by default)."""

    def __init__(self, kind: str, cache_dir: Path | None = None, *, load: Load | None = None,
                 settle_seconds: float = 10.0, retry_after: int = 10, heartbeat_seconds: float = 15.0) -> None:
        known = next((k for k in RUNNER_KINDS if k == kind), None)
        if known is None:
            raise UnknownRunner(f"SKILLHOUSE_GUEST is {kind!r}; use one of {', '.join(RUNNER_KINDS)}")
        self.kind: RunnerKind = known
        self._load = load or _load_agent(cache_dir)
        self.settle_seconds = settle_seconds
        self.retry_after = retry_after
        self.heartbeat_seconds = heartbeat_seconds
        self._changed = threading.Condition()
        self._state: GuestPhase = "ready" if kind == "inprocess" else "starting"
        self._stage: str | None = None
        self._message: str | None = None
        self._started = self._finished = time.monotonic()
        self._thread: threading.Thread | None = None
        self._component: LoadedComponent | None = None
        self.pool = RunnerPool(lambda host, _kind: self.make_runner(host))
        """The warm runners of this server's calls."""

    def start(self) -> None:
        """Start making the guest ready in the background (once; later calls do nothing)."""
        with self._changed:
            if self._thread is not None or self.kind == "inprocess":
                return
            self._started = time.monotonic()
            self._thread = threading.Thread(target=self._build, name="guest-build", daemon=True)
            self._thread.start()
        log.info("guest: preparing the WebAssembly guest in the background")

    def status(self) -> GuestStatus:
        with self._changed:
            end = time.monotonic() if self._state in ("starting", "building") else self._finished
            return GuestStatus(self.kind, self._state, self._stage, self._message, round(end - self._started, 3))

    def wait(self, timeout: float) -> GuestStatus:
        """The status once the guest is ready or failed, or after ``timeout`` seconds."""
        self.start()
        with self._changed:
            self._changed.wait_for(lambda: self._state in ("ready", "failed"), timeout)
        return self.status()

    def settle(self) -> GuestStatus:
        """The status once the cache has been read (or ``settle_seconds`` passed): ready, building or failed."""
        self.start()
        with self._changed:
            # reading a warm cache takes a moment: wait for it rather than turning a call away
            self._changed.wait_for(lambda: self._state != "starting", self.settle_seconds)
        return self.status()

    def require(self) -> None:
        """Return when calls can run; raise :class:`GuestNotReady` saying why not and what to do."""
        status = self.settle()
        if status.state == "ready":
            return
        if status.state == "failed":
            raise GuestBuildFailed(f"the WebAssembly guest could not be built: {status.message}")
        doing = status.stage or "reading the guest cache"
        raise GuestBuilding(
            f"the WebAssembly guest is being prepared ({doing}; {status.elapsed_seconds:.0f} s so far); "
            f"calls run once it is ready: retry in {self.retry_after} s",
            self.retry_after,
        )

    def make_runner(self, host: TurnHost) -> GuestRunner:
        """A runner over ``host``; only once :meth:`require` has passed (a call never builds the guest)."""
        if self.kind == "inprocess":
            return InProcessRunner(host)
        self.require()
        # imported here so wasmtime loads only in processes that run the component
        from skillhouse.host.wasm_runner import WasmRunner

        return WasmRunner(host, loaded=self._component)

    def close(self) -> None:
        self.pool.clear()

    def _build(self) -> None:
        threading.Thread(target=self._heartbeat, name="guest-build-heartbeat", daemon=True).start()
        try:
            component = self._load(self._announce)
        except Exception as exc:  # whatever stopped the build is what the calls must be told
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            with self._changed:
                self._state, self._message, self._finished = "failed", message, time.monotonic()
                self._changed.notify_all()
            log.error("guest: the WebAssembly guest could not be built; calls answer guest-unavailable: %s", message)
            return
        with self._changed:
            self._component, self._state, self._stage = component, "ready", None
            self._finished = time.monotonic()
            self._changed.notify_all()
        log.info("guest: the WebAssembly guest is ready (%.1f s)", self._finished - self._started)

    def _announce(self, stage: str) -> None:
        with self._changed:
            self._state, self._stage = "building", stage
            elapsed = time.monotonic() - self._started
            self._changed.notify_all()
        log.info("guest: %s (%.0f s so far; calls answer guest-building until it is ready)", stage, elapsed)

    def _heartbeat(self) -> None:
        with self._changed:
            while not self._changed.wait_for(lambda: self._state in ("ready", "failed"), self.heartbeat_seconds):
                if self._state == "building":
                    log.info("guest: still %s (%.0f s so far)", self._stage, time.monotonic() - self._started)
