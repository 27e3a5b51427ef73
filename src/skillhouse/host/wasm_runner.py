"""The guest run as a WebAssembly component under wasmtime: the same interface as the in-process runner.

The component (see :mod:`skillhouse.host.wasm_build`) imports nothing but the host functions of
``host/wit/agent.wit``; the linker defines exactly those, each forwarding to the turn's :class:`Host`.
One store and one instance hold the guest's state for the turn (loaded tools stay loaded).

The engine, the deserialized component and the epoch clock are loaded once per process and app
(:func:`loaded_component`), so a runner costs an instantiation, not a cache lookup and a load.

A trap in the guest answers that call ``{"error": {"code": "guest-trap"}}`` and the next call gets a
fresh instance (a trapped instance cannot be entered again). A call whose guest code runs longer
than ``timeout`` seconds is interrupted by epoch (see :mod:`skillhouse.host.wasm_clock`); time the
host spends on the guest's behalf, so a slow model or upstream, does not count against the guest.
It answers ``guest-timeout``, again with a fresh instance next. Each linear memory of an instance may
grow to ``memory_limit`` bytes (:data:`DEFAULT_MEMORY_LIMIT`) and no further: a guest holding more (a
model's answer or a tool's arguments of hundreds of MB, or a guest gone wrong) traps, answering that
call ``guest-trap``, instead of growing the host process without bound. An exception raised by the host
itself propagates unchanged, as it would in process, and the next call gets a fresh instance too.

A tool call whose answer is what the host's ``fetch_url`` answers crosses the boundary once:
``call-tool`` hands back the request unsent and the runner sends it (see ``host/wit/agent.wit``). The
guest calling ``fetch-url`` itself would cross into the host and back out with its answer, unchanged.

The guest's listing is a function of its own state alone (its catalogue, read once, and the tools it
has loaded), and that state changes only while guest code runs. So the runner keeps the instance's last
``list-tools`` answer and hands it out again until anything else enters the guest: every other export
call, a new instance, :meth:`WasmRunner.close`. Only an answer whose making called no host function is
kept (the first listing of an instance asks the host for the turn's skills), so a kept listing never
depends on anything outside the instance that made it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import wasmtime
from wasmtime.component import Component, Instance, Linker

from skillhouse.guest.host import SEND, Host, read_sent
from skillhouse.guest.values import FetchRequest, json_dump
from skillhouse.host.wasm_build import (
    AGENT_APP,
    GuestApp,
    Progress,
    default_cache_dir,
    discard_compiled,
    ensure_component,
    make_engine,
)
from skillhouse.host.wasm_calls import Exports, HostFailure, HostHooks, context_address, define_host_function
from skillhouse.host.wasm_clock import EpochClock, GuestBudget

HOST_INTERFACE = "skillhouse:agent/host@0.1.0"
EXPORTS = ("list-tools", "call-tool", "run-turn")
# WIT name, Host method, whether it answers a string
HOST_FUNCTIONS = (
    ("eager-tools", "eager_tools", True),
    ("skill-operations", "skill_operations", True),
    ("read-object", "read_object", True),
    ("fetch-url", "fetch_url", True),
    ("complete", "complete", True),
    ("log", "log", False),
)
DEFAULT_TIMEOUT = 30.0
DEFAULT_MEMORY_LIMIT = 256 * 1024 * 1024
"""Bytes each of an instance's linear memories may hold: the guest starts at about 13 MB and holds a turn's
releases about three times over (Stripe's 3.7 MB release of 468 operations: 24 MB in all)."""


@dataclass(frozen=True)
class LoadedComponent:
    """A compiled component ready to instantiate, with the engine and epoch clock its stores share."""

    engine: wasmtime.Engine
    component: Component
    clock: EpochClock


_loaded: dict[tuple[GuestApp, Path], LoadedComponent] = {}
_loading = threading.Lock()


def loaded_component(
    app: GuestApp = AGENT_APP, cache_dir: Path | None = None, progress: Progress | None = None
) -> LoadedComponent:
    """The component of ``app`` from ``cache_dir``, built if need be and loaded once per process.

    Compiled code the engine refuses (written by another wasmtime or for another CPU under a key that
    did not tell them apart) is compiled again rather than failing every call.
    """
    directory = (default_cache_dir() if cache_dir is None else cache_dir).resolve()
    with _loading:
        loaded = _loaded.get((app, directory))
        if loaded is None:
            engine = make_engine()
            built = ensure_component(app, directory, engine=engine, progress=progress)
            try:
                component = Component.deserialize_file(engine, str(built.compiled))
            except wasmtime.WasmtimeError:
                discard_compiled(built)
                built = ensure_component(app, directory, engine=engine, progress=progress)
                component = Component.deserialize_file(engine, str(built.compiled))
            loaded = LoadedComponent(engine, component, EpochClock(engine))
            _loaded[(app, directory)] = loaded
    return loaded


class WasmRunner:
    """One turn's guest as a wasm component instance over ``host``."""

    def __init__(
        self,
        host: Host,
        *,
        cache_dir: Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        memory_limit: int = DEFAULT_MEMORY_LIMIT,
        app: GuestApp = AGENT_APP,
        progress: Progress | None = None,
        loaded: LoadedComponent | None = None,
    ) -> None:
        self.host = host
        self.timeout = timeout
        self.memory_limit = memory_limit
        loaded = loaded or loaded_component(app, cache_dir, progress)
        self._engine, self._component, self._clock = loaded.engine, loaded.component, loaded.clock
        self._failure = HostFailure()
        self._budget: GuestBudget | None = None
        self._linker, self._callbacks = self._link()
        self._lock = threading.Lock()
        self._exports: Exports | None = None
        self._listing: str | None = None
        self._host_calls = 0
        self.restarts = 0
        # a host in this process may take the request as decoded (``fetch_request``): read off call-tool's
        # answer, it is that already; any other host gets the text the guest's fetch-url would have
        self._send: Callable[[FetchRequest], str] = getattr(host, "fetch_request", None) or self._send_text

    def list_tools(self) -> str:
        with self._lock:
            listing = self._listing
            if listing is None:
                host_calls = self._host_calls
                listing = self._enter("list-tools")
                # kept only when the call returned (a failure discards the instance and counts a restart)
                # and its answer came from the guest's state alone
                if self._exports is not None and self._host_calls == host_calls:
                    self._listing = listing
            return listing

    def call_tool(self, name: str, arguments: str) -> str:
        with self._lock:
            answer = self._enter("call-tool", name, arguments)
            if answer[:1] != SEND:
                return answer
            # the guest's request, unsent: its fetch_url answer is the call's (see host/wit/agent.wit)
            try:
                return self._send(read_sent(answer))
            except BaseException:
                # as when the host raised within the guest's call, which unwound it: a fresh instance next
                self._discard()
                raise

    def _send_text(self, request: FetchRequest) -> str:
        return self.host.fetch_url(json_dump(request))

    def run_turn(self, request: str) -> str:
        with self._lock:
            return self._enter("run-turn", request)

    def forget_listing(self) -> None:
        """Drop the kept listing, as any entry into the guest does: the next :meth:`list_tools` calls the export."""
        with self._lock:
            self._listing = None

    def close(self) -> None:
        with self._lock:
            self._exports = None
            self._budget = None
            self._listing = None

    def __enter__(self) -> WasmRunner:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _link(self) -> tuple[Linker, list[Any]]:
        linker = Linker(self._engine)
        hooks = HostHooks(self._host_entered, self._host_left)
        callbacks = []
        with linker.root() as root, root.add_instance(HOST_INTERFACE) as interface:
            for wit_name, method, returns in HOST_FUNCTIONS:
                function = getattr(self.host, method)
                callbacks.append(define_host_function(interface, wit_name, function, returns, hooks, self._failure))
        return linker, callbacks

    def _host_entered(self, context: int) -> None:
        self._host_calls += 1
        if self._budget is not None:
            self._budget.host_entered(context)

    def _host_left(self, context: int) -> None:
        if self._budget is not None:
            self._budget.host_left(context)

    def _instance(self) -> tuple[Exports, GuestBudget]:
        if self._exports is None or self._budget is None:
            store = wasmtime.Store(self._engine)
            store.set_limits(memory_size=self.memory_limit)  # memory.grow past it fails: the guest traps
            budget = GuestBudget(self._clock, context_address(store), self.timeout)
            self._budget = budget
            budget.start()  # instantiation runs guest code too
            try:
                instance: Instance = self._linker.instantiate(store, self._component)
            finally:
                budget.stop()
            funcs = {name: instance.get_func(store, name) for name in EXPORTS}
            self._exports = Exports(store, {name: func for name, func in funcs.items() if func is not None})
        return self._exports, self._budget

    def _enter(self, export: str, *args: str) -> str:
        """Call ``export`` of the instance (made if need be); the caller holds the lock."""
        self._listing = None  # guest code runs: its state may change
        exports, budget = self._exports, self._budget
        if exports is None or budget is None:
            exports, budget = self._instance()
        budget.start()
        try:
            return exports.call(export, *args)
        except wasmtime.WasmtimeError as exc:
            failed = exc
        except BaseException:
            self._discard()
            raise
        finally:
            budget.stop()
        self._discard()
        raised = self._failure.take()
        if raised is not None:
            raise raised  # the host raised: the guest was unwound mid-call
        return _guest_failure(export, failed, budget.exhausted, self.timeout)

    def _discard(self) -> None:
        self._exports = None
        self._budget = None
        self._listing = None
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
