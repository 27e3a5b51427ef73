"""The host side of a turn: the host functions a guest calls, and the runners that run a guest."""

from skillhouse.host.runner import (
    RUNNER_KINDS,
    GuestRunner,
    InProcessRunner,
    RunnerKind,
    UnknownRunner,
    make_runner,
)
from skillhouse.host.turn import TurnHost, bound_skill

__all__ = [
    "RUNNER_KINDS",
    "GuestRunner",
    "InProcessRunner",
    "RunnerKind",
    "TurnHost",
    "UnknownRunner",
    "bound_skill",
    "make_runner",
]
