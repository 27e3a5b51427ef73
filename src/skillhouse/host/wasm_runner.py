"""The guest run as a WebAssembly component under wasmtime: the same interface as the in-process runner.

The component (see :mod:`skillhouse.host.wasm_build`) imports nothing but the host functions of
``wit/agent.wit``; the linker defines exactly those, each forwarding to the turn's :class:`Host`.
One store and one instance hold the guest's state for the turn (loaded tools stay loaded).

A trap in the guest answers that call ``{"error": {"code": "guest-trap"}}`` and the next call gets a
fresh instance (a trapped instance cannot be entered again). A call whose guest code runs longer
than ``timeout`` seconds is interrupted by epoch: a clock thread advances the engine's epoch while the
guest runs, and pauses while the host works on the guest's behalf, so a slow model or upstream
does not count against the guest. It answers ``guest-timeout``, again with a fresh instance next.
An exception raised by the host itself propagates unchanged, as it would in process.
"""

from __future__ import annotations

import json
import math
import os
import threading
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import wasmtime
from wasmtime.component import Component, Func, Instance, Linker

from skillhouse.guest import Host
from skillhouse.host.wasm_build import (
    AGENT_APP,
    GuestApp,
    Progress,
    ensure_component,
    make_engine,
    unbuildable_reason,
)

HOST_INTERFACE = "skillhouse:agent/host@0.1.0"
EXPORTS = ("list-tools", "call-tool", "run-turn")
DEFAULT_TIMEOUT = 30.0


def preferred_kind(env: Mapping[str, str] | None = None) -> str:
    """The runner kind for turns: ``SKILLHOUSE_GUEST`` when set, else ``wasm`` where it can be built."""
    env = os.environ if env is None else env
    if env.get("SKILLHOUSE_GUEST"):
        return env["SKILLHOUSE_GUEST"]
    return "wasm" if unbuildable_reason() is None else "inprocess"


class GuestClock:
    """Advances an engine's epoch every ``tick`` seconds while guest code runs, counting the ticks."""

    def __init__(self, engine: wasmtime.Engine, tick: float) -> None:
        self.tick = tick
        self.ticks = 0
        self._engine = engine
        self._running = threading.Event()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="guest-epoch-clock", daemon=True)
        self._thread.start()

    def start(self) -> None:
        self._running.set()

    def pause(self) -> None:
        self._running.clear()

    def reset(self) -> None:
        self.ticks = 0

    def close(self) -> None:
        self._closed.set()
        self._running.set()  # wake the thread so it sees the close

    def _run(self) -> None:
        while not self._closed.is_set():
            self._running.wait()
            # waiting on the close event doubles as an interruptible tick
            if self._closed.wait(self.tick):
                return
            if self._running.is_set():
                self.ticks += 1  # before the epoch moves, so a trap it causes always sees the count
                self._engine.increment_epoch()


class WasmRunner:
    """One turn's guest as a wasm component instance over ``host``."""

    def __init__(
        self,
        host: Host,
        *,
        cache_dir: Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        app: GuestApp = AGENT_APP,
        progress: Progress | None = None,
    ) -> None:
        self.host = host
        self.timeout = timeout
        self._engine = make_engine()
        built = ensure_component(app, cache_dir, engine=self._engine, progress=progress)
        self._component = Component.deserialize_file(self._engine, str(built.compiled))
        tick = min(0.05, timeout / 10)
        self._deadline_ticks = max(1, math.ceil(timeout / tick))
        self._clock = GuestClock(self._engine, tick)
        weakref.finalize(self, self._clock.close)  # the clock's thread must not outlive the runner
        self._linker = self._link()
        self._lock = threading.Lock()
        self._store: wasmtime.Store | None = None
        self._funcs: dict[str, Func] = {}
        self.restarts = 0

    def list_tools(self) -> str:
        return self._call("list-tools")

    def call_tool(self, name: str, arguments: str) -> str:
        return self._call("call-tool", name, arguments)

    def run_turn(self, request: str) -> str:
        return self._call("run-turn", request)

    def close(self) -> None:
        self._clock.close()

    def __enter__(self) -> WasmRunner:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _link(self) -> Linker:
        linker = Linker(self._engine)
        host_functions: dict[str, Callable[..., Any]] = {
            "eager-tools": self.host.eager_tools,
            "skill-operations": self.host.skill_operations,
            "read-object": self.host.read_object,
            "fetch-url": self.host.fetch_url,
            "complete": self.host.complete,
            "log": self.host.log,
        }
        with linker.root() as root, root.add_instance(HOST_INTERFACE) as interface:
            for name, function in host_functions.items():
                interface.add_func(name, self._host_call(function))
        return linker

    def _host_call(self, function: Callable[..., Any]) -> Callable[..., Any]:
        clock = self._clock

        def call(_store: object, *args: Any) -> Any:
            clock.pause()  # time the host spends is not the guest's
            try:
                return function(*args)
            finally:
                clock.start()

        return call

    def _instance(self) -> tuple[wasmtime.Store, dict[str, Func]]:
        if self._store is None:
            store = wasmtime.Store(self._engine)
            store.set_epoch_deadline(self._deadline_ticks)  # instantiation runs guest code too
            self._clock.reset()
            self._clock.start()
            try:
                instance: Instance = self._linker.instantiate(store, self._component)
            finally:
                self._clock.pause()
            funcs = {name: instance.get_func(store, name) for name in EXPORTS}
            self._funcs = {name: func for name, func in funcs.items() if func is not None}
            self._store = store
        return self._store, self._funcs

    def _call(self, export: str, *args: str) -> str:
        with self._lock:
            store, funcs = self._instance()
            func = funcs[export]
            store.set_epoch_deadline(self._deadline_ticks)
            self._clock.reset()
            self._clock.start()
            try:
                result = func(store, *args)
                func.post_return(store)
            except wasmtime.WasmtimeError as exc:
                timed_out = self._clock.ticks >= self._deadline_ticks
                self._discard()
                return _guest_failure(export, exc, timed_out, self.timeout)
            except BaseException:
                self._discard()  # the host raised: the guest was unwound mid-call
                raise
            finally:
                self._clock.pause()
            return str(result)

    def _discard(self) -> None:
        self._store = None
        self._funcs = {}
        self.restarts += 1


def _guest_failure(export: str, exc: wasmtime.WasmtimeError, timed_out: bool, timeout: float) -> str:
    if timed_out:
        error = {
            "code": "guest-timeout",
            "message": f"the guest ran {export} for longer than {timeout:g} s and was stopped; it restarts on the next call",
        }
    else:
        # the last line of wasmtime's report says what trapped; the backtrace is noise for the model
        cause = [line.strip() for line in str(exc).splitlines() if line.strip()][-1:]
        error = {
            "code": "guest-trap",
            "message": f"the guest stopped with a trap in {export} ({''.join(cause)}); it restarts on the next call",
        }
    return json.dumps({"error": error})
