"""A run that breaks is that run's failure, and Ctrl-C still reports the runs made so far."""

from __future__ import annotations

from pathlib import Path

from skillhouse.evals import ARMS, Arm, Task, evaluation, load_task_set
from skillhouse.evals.plans import eval_scripted_model
from skillhouse.host.models import ChatModel
from skillhouse.json_types import ModelAnswer, ModelRequest

TASKS = Path(__file__).resolve().parents[2] / "examples" / "evals" / "hollowbrook.yaml"


class Breaking:
    """A model adapter that breaks its contract by raising, as a bug in one would."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def complete(self, request: ModelRequest) -> ModelAnswer:
        raise self.error


def test_a_run_that_breaks_is_a_failed_run_with_the_reason_and_the_next_runs_go_on() -> None:
    task_set = load_task_set(TASKS)

    def model_for(task: Task, arm: Arm) -> ChatModel:
        if arm.name == "tools":
            return Breaking(RuntimeError("the adapter fell over"))
        return eval_scripted_model(task.scripted[arm.name])

    with evaluation(task_set, model_for, "inprocess") as ev:
        broken, fine = ev.run(task_set.tasks[:1], ["tools", "raw"], 1)
    assert (broken.success, broken.stopped) == (False, "harness-error")
    assert broken.error == {"code": "harness-error", "message": "RuntimeError: the adapter fell over"}
    assert (fine.success, fine.stopped) == (True, "answer")


def test_ctrl_c_ends_the_runs_and_keeps_those_made() -> None:
    task_set = load_task_set(TASKS)
    made: list[str] = []

    def model_for(task: Task, arm: Arm) -> ChatModel:
        if len(made) == 2:
            return Breaking(KeyboardInterrupt())
        made.append(arm.name)
        return eval_scripted_model(task.scripted[arm.name])

    with evaluation(task_set, model_for, "inprocess") as ev:
        results = ev.run(task_set.tasks, list(ARMS), 3)
    assert ev.interrupted
    assert [(r.task, r.arm, r.run) for r in results] == [("check-then-book", "tools", 1), ("check-then-book", "raw", 1)]
