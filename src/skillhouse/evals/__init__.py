"""``skillhouse eval``: run a task set against a model in two arms, skillhouse tools and the raw path.

:mod:`~skillhouse.evals.tasks` reads the task file, :mod:`~skillhouse.evals.arms` says what each arm
offers the model, :mod:`~skillhouse.evals.runner` runs the tasks through the guest and a real gateway
against the upstream, and :mod:`~skillhouse.evals.report` sums the runs up (docs/evaluations.md).
"""

from skillhouse.evals.arms import ARMS, Arm
from skillhouse.evals.report import report_document, report_table, wilson_interval
from skillhouse.evals.runner import Evaluation, RunResult, evaluation
from skillhouse.evals.tasks import Task, TaskSet, TaskSetError, load_task_set

__all__ = [
    "ARMS",
    "Arm",
    "Evaluation",
    "RunResult",
    "Task",
    "TaskSet",
    "TaskSetError",
    "evaluation",
    "load_task_set",
    "report_document",
    "report_table",
    "wilson_interval",
]
