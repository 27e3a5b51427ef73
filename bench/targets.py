"""The targets ``make bench`` checks, and how a section states a measured figure against one.

Every target a section checks is written here once, with the figure it bounds. A section prints each
measured figure with :meth:`Target.figure` (enough digits that its side of the limit shows: 0.1004
is not printed as 0.100 against a limit of 0.1) and, for every figure that misses, the line of
:meth:`Target.shortfall`, which ``bench/run.py`` also gathers at the top of ``docs/benchmarks.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

SHORTFALL = "- Shortfall: "
"""How a shortfall line starts (``bench/run.py`` collects the lines that do)."""


@dataclass(frozen=True)
class Target:
    """``figure`` ≤ ``limit`` (``at_most``) or ≥ ``limit``; ``unit`` follows printed values ("×", " s")."""

    figure_name: str
    limit: float
    at_most: bool = True
    unit: str = ""

    @property
    def stated(self) -> str:
        return f"{self.figure_name} {'≤' if self.at_most else '≥'} {self.limit:g}{self.unit}"

    def met(self, value: float) -> bool:
        return value <= self.limit if self.at_most else value >= self.limit

    def figure(self, value: float, least_digits: int = 2) -> str:
        """``value`` with the fewest decimals (at least ``least_digits``) that keep it on its side of the limit."""
        for digits in range(least_digits, 7):
            shown = float(f"{value:.{digits}f}")
            if value == self.limit or (shown != self.limit and self.met(shown) == self.met(value)):
                return f"{value:.{digits}f}"
        return f"{value:.6f}"

    def verdict(self, value: float) -> str:
        return "meets" if self.met(value) else "misses"

    def shortfall(self, where: str, value: float, why: str = "") -> str | None:
        """The line saying by how much ``value`` misses (None when it meets the target)."""
        if self.met(value):
            return None
        gap = abs(value - self.limit) / self.limit * 100
        side = "over" if self.at_most else "under"
        line = (
            f"{SHORTFALL}{where}: {self.figure_name} {self.figure(value)}{self.unit}, target {'≤' if self.at_most else '≥'} "
            f"{self.limit:g}{self.unit} ({gap:.{0 if gap >= 1 else 2}f}% {side})."
        )
        return f"{line} {why}".rstrip()


# The targets, as the project states them.
IMPORT_TIME = Target("time ratio to FastMCP", 0.1)
"""Import + compile of an OpenAPI spec in ≤ 0.1 × FastMCP's ``from_openapi`` + tool listing, on every spec it handles."""
IMPORT_MEMORY_LARGE = Target("peak memory ratio to FastMCP", 0.1)
"""Peak memory ≤ 0.1 × FastMCP's on specs of 100 operations or more (whole processes) ..."""
IMPORT_MEMORY_SMALL = Target("peak memory ratio to FastMCP", 0.5)
"""... and ≤ 0.5 × on smaller ones."""
LARGE_SPEC = 100
COVERAGE = Target("operations that became tools", 99.0, at_most=False, unit="%")
"""≥ 99% of each spec's operations become typed tools."""
CLI_PATH = Target("CLI / in-process", 1.5, unit="×")
"""``import-openapi`` + ``tools`` through the CLI within 1.5 × the same work in one process, on every corpus spec."""
HELP_CPU = Target("`skillhouse --help` CPU", 0.25, unit=" s")
CALL_TRANSLATION = Target("ratio to FastMCP's server side", 0.1)
"""Validation + translation of a call in ≤ 0.1 × FastMCP's server-side per-call time."""
WASM_CALL = Target("wasm / in process", 3.0, unit="×")
"""The wasm guest ≤ 3 × the in-process guest per call."""
WASM_WARM_START = Target("warm wasm start", 0.2, unit=" s")
"""A warm wasm start (component cached) ≤ 0.2 s, counted in a new process from its imports to the first answer."""
GATEWAY = Target("gateway / direct", 0.5, at_most=False, unit="×")
"""Gateway throughput ≥ 0.5 × direct calls to the same loopback upstream, idempotency on."""
TURN_START = Target("time / read time", 2.0, unit="×")
"""A turn's tools for 500 bound operations in ≤ 2 × the time to read the release from the store."""
