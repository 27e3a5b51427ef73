"""Running a turn's guest: the interface every runner offers, and the in-process runner.

A runner holds one guest for one turn over one :class:`~skillhouse.guest.host.Host`. The in-process
runner calls the guest's Python directly; the wasm runner runs the same code compiled into a
WebAssembly component. Both take and give the same JSON strings, so one test suite runs against both.
"""

from __future__ import annotations

from typing import Literal, Protocol, get_args

from skillhouse.errors import CallerError
from skillhouse.guest.host import Host

TYPE_CHECKING = False
if TYPE_CHECKING:
    from skillhouse.guest.guest import Guest

RunnerKind = Literal["inprocess", "wasm"]
RUNNER_KINDS: tuple[RunnerKind, ...] = get_args(RunnerKind)


class GuestRunner(Protocol):
    """The guest's exports, as JSON strings in and out."""

    def list_tools(self) -> str:
        """``{"tools": [offered definitions], "deferred": [definitions not loaded yet]}``."""
        ...

    def call_tool(self, name: str, arguments: str) -> str:
        """The JSON answer the model sees for calling ``name`` with ``arguments`` (JSON text)."""
        ...

    def run_turn(self, request: str) -> str:
        """The agent loop's transcript and final answer (see :mod:`skillhouse.guest.loop`)."""
        ...


class InProcessRunner:
    """The guest run as ordinary Python in this process."""

    def __init__(self, host: Host) -> None:
        # here: a process that runs wasm guests only never imports the guest's own loop
        from skillhouse.guest.guest import Guest

        self.guest: Guest = Guest(host)

    def list_tools(self) -> str:
        return self.guest.list_tools()

    def call_tool(self, name: str, arguments: str) -> str:
        return self.guest.call_tool(name, arguments)

    def run_turn(self, request: str) -> str:
        return self.guest.run_turn(request)


class UnknownRunner(CallerError, ValueError):
    """A runner kind this build does not have (``unknown-runner``); the message lists the kinds there are."""

    code = "unknown-runner"


def make_runner(host: Host, kind: str = "inprocess") -> GuestRunner:
    """A runner of ``kind`` (one of :data:`RUNNER_KINDS`) for a turn over ``host``."""
    if kind == "inprocess":
        return InProcessRunner(host)
    if kind == "wasm":
        # imported here so wasmtime loads only for turns that run the component
        from skillhouse.host.wasm_runner import WasmRunner

        return WasmRunner(host)
    raise UnknownRunner(f"unknown guest runner {kind!r}; known: {', '.join(RUNNER_KINDS)}")
