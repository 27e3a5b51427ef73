"""The import report: what became of each operation, and the totals.

Every operation is ``written`` (as the spec says), ``adapted`` (written, with what was changed and
why) or ``skipped`` (with the reason); every reference that could not be followed is listed with
its file and reason. A skip whose reason is an exception the wizard did not expect
is a ``converter-error``: a bug in skillhouse, not in the spec, so it carries where it happened (the
operation's JSON pointer, the exception) for tests and bug reports to see. The report is data; the
CLI decides how to show it.
"""

from __future__ import annotations

from skillhouse.openapi.references import RefProblem
from skillhouse.records import field, record

# Not `from typing import TYPE_CHECKING`: typing is start-up time `import skillhouse.openapi` does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from skillhouse.json_types import JsonObject

    Status = Literal["written", "adapted", "skipped"]


@record(frozen=True)
class ConverterError:
    """An exception raised while converting one operation that the wizard did not expect."""

    pointer: str
    """JSON pointer (RFC 6901) to the operation in the spec, e.g. ``/paths/~1pets~1{id}/get``."""
    exception: str
    """The exception's type name."""
    message: str
    raised_at: str
    """The innermost skillhouse source line on the way to the exception (``openapi/schemas.py:120``)."""

    def note(self) -> str:
        return (
            f"converter-error at {self.pointer}: {self.exception}: {self.message} (raised at {self.raised_at}); "
            "this is a bug in skillhouse, please report it with the operation"
        )

    def as_dict(self) -> dict[str, str]:
        return {"pointer": self.pointer, "exception": self.exception, "message": self.message, "raised_at": self.raised_at}


@record(frozen=True)
class OperationOutcome:
    """One operation of the spec and what the wizard did with it."""

    name: str
    """The operation file's stem (the name the skill lists it under)."""
    method: str
    path: str
    status: Status
    notes: tuple[str, ...] = ()
    """For ``adapted``: each change; for ``skipped``: the reason."""
    error: ConverterError | None = None
    """Set (with ``status`` ``skipped``) when the reason is an exception the wizard did not expect."""

    @property
    def kind(self) -> str:
        """``converter-error`` for a skip caused by a wizard bug, else the status."""
        return "converter-error" if self.error is not None else self.status

    def as_dict(self) -> JsonObject:
        out: JsonObject = {"name": self.name, "method": self.method, "path": self.path, "status": self.status, "notes": list(self.notes)}
        if self.error is not None:
            out["converter_error"] = self.error.as_dict()
        return out


@record
class ImportReport:
    """Everything an import did, in spec order."""

    spec: str
    skill: str
    outcomes: list[OperationOutcome] = field(default_factory=list)
    security: list[str] = field(default_factory=list)
    """The spec's security schemes: reported for the gateway's credential binding, never written."""
    credentials: list[JsonObject] = field(default_factory=list)
    """A gateway binding template per security scheme (per OAuth flow), filled in as far as the spec says
    (``openapi/security.py``); a scheme the gateway cannot serve says why."""
    scopes: dict[str, list[JsonObject]] = field(default_factory=dict)
    """Per operation (by name): the security it requires, each alternative as ``{scheme: [scopes]}``."""
    filtered: int = 0
    """Operations left out by ``--include``/``--exclude``."""
    curation: JsonObject | None = None
    """What ``curation.yaml`` changed per operation, what it hid, and its problems (located)."""
    curation_lines: list[str] = field(default_factory=list)
    """The overlay's summary and each problem, for people."""
    problems: list[RefProblem] = field(default_factory=list)
    """Each reference that could not be followed (or points where it should not), once, in the order met."""

    def totals(self) -> dict[str, int]:
        counts = {"operations": len(self.outcomes), "written": 0, "adapted": 0, "skipped": 0}
        for outcome in self.outcomes:
            counts[outcome.status] += 1
        return counts

    def converter_errors(self) -> list[OperationOutcome]:
        """The operations skipped because the wizard raised an exception it did not expect."""
        return [o for o in self.outcomes if o.error is not None]

    def coverage(self) -> float:
        """Share of operations that became tools (1.0 for a spec with none)."""
        totals = self.totals()
        return 1.0 if not totals["operations"] else (totals["written"] + totals["adapted"]) / totals["operations"]

    def as_dict(self) -> JsonObject:
        return {
            "spec": self.spec,
            "skill": self.skill,
            "totals": self.totals(),
            "filtered": self.filtered,
            "security": self.security,
            **({"credentials": self.credentials} if self.credentials else {}),
            "problems": [p.as_dict() for p in self.problems],
            "operations": [{**o.as_dict(), **({"security": self.scopes[o.name]} if o.name in self.scopes else {})}
                           for o in self.outcomes],
            **({"curation": self.curation} if self.curation is not None else {}),
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
        failed = self.converter_errors()
        if failed:
            out.append(
                "converter errors (bugs in skillhouse; please report them): "
                + ", ".join(f"{o.name} at {o.error.pointer} ({o.error.exception})" for o in failed if o.error is not None)
            )
        if self.security:
            out.append(
                "credentials: bind these in the gateway (never written in the skill): " + ", ".join(self.security)
            )
        for template in self.credentials:
            if template.get("supported"):
                fields = ", ".join(f"{k}={' '.join(map(str, v)) if isinstance(v, list) else v}"
                                   for k, v in template.items()
                                   if k not in ("security_scheme", "supported", "value") and v is not None)  # fmt: skip
                out.append(f"  {template['security_scheme']}: {fields}")
            else:
                out.append(f"  {template['security_scheme']}: not served by the gateway ({template.get('why')})")
        needed = sorted({s for alternatives in self.scopes.values() for a in alternatives for v in a.values()
                         if isinstance(v, list) for s in v if isinstance(s, str)})  # fmt: skip
        if needed:
            out.append("scopes the operations need (each operation's are in the report's JSON): " + ", ".join(needed[:named])
                       + (f" and {len(needed) - named} more" if len(needed) > named else ""))
        return [*out, *self.curation_lines]
