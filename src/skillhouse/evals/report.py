"""What an evaluation reports: per task and arm, and per arm over every task, as JSON and as a table.

The success rate's interval is the Wilson score interval, which stays inside [0, 1] and says
something honest about 0 of 5 or 5 of 5, where the normal approximation collapses to a point.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skillhouse.evals.runner import RunResult
from skillhouse.json_types import JsonObject

if TYPE_CHECKING:
    from rich.console import JustifyMethod
    from rich.table import Table

REPORT_VERSION = 1


def z_for(confidence: float) -> float:
    """The two-sided standard normal quantile for ``confidence`` (0.95 gives 1.96)."""
    if not 0 < confidence < 1:
        raise ValueError("the confidence is a number between 0 and 1, such as 0.95")
    return statistics.NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` in ``trials``; (0, 1) for no trials."""
    if trials <= 0:
        return (0.0, 1.0)
    z = z_for(confidence)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    # at 0 or all successes the bound is exactly 0 or 1, not a rounding error away from it
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return (low, high)


@dataclass(frozen=True)
class Summary:
    """The runs of one task in one arm (or of every task, ``task`` ``"*"``), summed up."""

    task: str
    arm: str
    runs: int
    successes: int
    interval: tuple[float, float]
    calls_per_task: float
    failed_calls_per_task: float
    model_calls_per_task: float
    input_tokens: int
    output_tokens: int
    wrong: int
    duplicate: int
    seconds_per_task: float

    @property
    def rate(self) -> float:
        return self.successes / self.runs if self.runs else 0.0

    def document(self) -> JsonObject:
        return {
            "task": self.task, "arm": self.arm, "runs": self.runs, "successes": self.successes,
            "success_rate": round(self.rate, 4),
            "interval": [round(self.interval[0], 4), round(self.interval[1], 4)],
            "calls_per_task": round(self.calls_per_task, 2),
            "failed_calls_per_task": round(self.failed_calls_per_task, 2),
            "model_calls_per_task": round(self.model_calls_per_task, 2),
            "tokens": {
                "input": self.input_tokens, "output": self.output_tokens,
                "per_task": round((self.input_tokens + self.output_tokens) / self.runs, 1) if self.runs else 0,
            },
            "wrong_side_effects": self.wrong, "duplicate_side_effects": self.duplicate,
            "seconds_per_task": round(self.seconds_per_task, 3),
        }


def summarise(task: str, arm: str, runs: Sequence[RunResult], confidence: float) -> Summary:
    count = len(runs)
    successes = sum(1 for r in runs if r.success)

    def mean(values: list[float]) -> float:
        return sum(values) / count if count else 0.0

    return Summary(
        task, arm, count, successes, wilson_interval(successes, count, confidence),
        mean([r.calls for r in runs]), mean([r.failed_calls for r in runs]), mean([r.model_calls for r in runs]),
        sum(r.input_tokens for r in runs), sum(r.output_tokens for r in runs),
        sum(r.wrong for r in runs), sum(r.duplicate for r in runs), mean([r.seconds for r in runs]),
    )


def summaries(results: Sequence[RunResult], arms: Sequence[str], confidence: float) -> tuple[list[Summary], list[Summary]]:
    """Per task and arm, in the order the tasks ran; and per arm over every task."""
    tasks = list(dict.fromkeys(r.task for r in results))
    by_task = [summarise(t, a, [r for r in results if r.task == t and r.arm == a], confidence)
               for t in tasks for a in arms]
    by_arm = [summarise("*", a, [r for r in results if r.arm == a], confidence) for a in arms]
    return by_task, by_arm


def report_document(meta: JsonObject, results: Sequence[RunResult], arms: Sequence[str], confidence: float,
                    transcripts: bool = False) -> JsonObject:
    """The JSON report (``--json``): what ran, the summaries, and every run."""
    by_task, by_arm = summaries(results, arms, confidence)
    return {
        "version": REPORT_VERSION,
        **meta,
        "arms": list(arms),
        "confidence": confidence,
        "tasks": [s.document() for s in by_task],
        "totals": [s.document() for s in by_arm],
        "runs": [r.document(transcripts) for r in results],
    }


def report_table(results: Sequence[RunResult], arms: Sequence[str], confidence: float, title: str) -> Table:
    """The table the command prints: a row per task and arm, then a row per arm over every task."""
    from rich.table import Table  # here: start-up time, rich only when a report is printed

    by_task, by_arm = summaries(results, arms, confidence)
    table = Table(title=title, show_lines=False)
    right: JustifyMethod = "right"
    table.add_column("task", overflow="fold")
    table.add_column("arm", no_wrap=True)
    for name in ("success", f"rate [{confidence:.0%} CI]", "calls/task", "failed", "tokens/task", "wrong", "dup", "s/task"):
        table.add_column(name, justify=right, no_wrap=True)
    for index, summary in enumerate([*by_task, *by_arm]):
        if index == len(by_task):
            table.add_section()
        table.add_row(*_row(summary), style="bold" if summary.task == "*" else None)
    return table


def _row(summary: Summary) -> list[str]:
    low, high = summary.interval
    tokens = (summary.input_tokens + summary.output_tokens) / summary.runs if summary.runs else 0
    colour = "green" if summary.rate >= 0.8 else "yellow" if summary.rate >= 0.5 else "red"
    return [
        "all tasks" if summary.task == "*" else summary.task,
        summary.arm,
        f"{summary.successes}/{summary.runs}",
        f"[{colour}]{summary.rate:.0%}[/{colour}] [{low:.0%}, {high:.0%}]",
        f"{summary.calls_per_task:.1f}",
        f"{summary.failed_calls_per_task:.1f}",
        f"{tokens:,.0f}" if summary.input_tokens + summary.output_tokens else "-",
        str(summary.wrong),
        str(summary.duplicate),
        f"{summary.seconds_per_task:.2f}",
    ]
