"""The import report: what became of each operation, and the totals.

Every operation is ``written`` (as the spec says), ``adapted`` (written, with what was changed and
why) or ``skipped`` (with the reason); every reference that could not be followed is listed with
its file and reason. The report is data; the CLI decides how to show it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from skillhouse.openapi.references import RefProblem

Status = Literal["written", "adapted", "skipped"]


@dataclass(frozen=True)
class OperationOutcome:
    """One operation of the spec and what the wizard did with it."""

    name: str
    """The operation file's stem (the name the skill lists it under)."""
    method: str
    path: str
    status: Status
    notes: tuple[str, ...] = ()
    """For ``adapted``: each change; for ``skipped``: the reason."""

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "method": self.method, "path": self.path, "status": self.status, "notes": list(self.notes)}


@dataclass
class ImportReport:
    """Everything an import did, in spec order."""

    spec: str
    skill: str
    outcomes: list[OperationOutcome] = field(default_factory=list)
    security: list[str] = field(default_factory=list)
    """The spec's security schemes: reported for the gateway's credential binding, never written."""
    filtered: int = 0
    """Operations left out by ``--include``/``--exclude``."""
    problems: list[RefProblem] = field(default_factory=list)
    """Each reference that could not be followed (or points where it should not), once, in the order met."""

    def totals(self) -> dict[str, int]:
        counts = {"operations": len(self.outcomes), "written": 0, "adapted": 0, "skipped": 0}
        for outcome in self.outcomes:
            counts[outcome.status] += 1
        return counts

    def coverage(self) -> float:
        """Share of operations that became tools (1.0 for a spec with none)."""
        totals = self.totals()
        return 1.0 if not totals["operations"] else (totals["written"] + totals["adapted"]) / totals["operations"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "skill": self.skill,
            "totals": self.totals(),
            "filtered": self.filtered,
            "security": self.security,
            "problems": [p.as_dict() for p in self.problems],
            "operations": [o.as_dict() for o in self.outcomes],
        }

    def lines(self, verbose: bool = False) -> list[str]:
        """Human-readable lines: the summary, after a line per operation (with its notes) when ``verbose``."""
        return [*self.operation_lines(), *self.summary_lines()] if verbose else self.summary_lines()

    def operation_lines(self) -> list[str]:
        """Every operation: its status, name and request line, then each note (a change, or why skipped)."""
        out: list[str] = []
        for outcome in self.outcomes:
            out.append(f"{outcome.status:8} {outcome.name} ({outcome.method} {outcome.path})")
            out.extend(f"         - {note}" for note in outcome.notes)
        return out

    def summary_lines(self, named: int = 10) -> list[str]:
        """The totals, the first ``named`` skipped operations by name, and the credentials to bind."""
        totals = self.totals()
        out = [
            f"{totals['operations']} operations: {totals['written']} written, {totals['adapted']} adapted, "
            f"{totals['skipped']} skipped ({self.coverage():.1%} became tools)"
            + (f"; {self.filtered} left out by --include/--exclude" if self.filtered else "")
        ]
        if self.problems:
            more = f" and {len(self.problems) - named} more" if len(self.problems) > named else ""
            out.append(f"{len(self.problems)} reference(s) could not be followed (each one's operations are adapted or skipped):")
            out.extend(f"  {p.text()}" for p in self.problems[:named])
            if more:
                out.append(f"  ...{more}")
        skipped = [o.name for o in self.outcomes if o.status == "skipped"]
        if skipped:
            more = f" and {len(skipped) - named} more" if len(skipped) > named else ""
            out.append("skipped: " + ", ".join(skipped[:named]) + more)
        if self.security:
            out.append(
                "credentials: bind these in the gateway (never written in the skill): " + ", ".join(self.security)
            )
        return out
