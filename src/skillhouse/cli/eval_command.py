"""``skillhouse eval TASKS --model MODEL``: run a task set in both arms and report (docs/evaluations.md).

Every problem before the first run (the task file, the model's spelling, the settings, the guest) is
said as ``error: CODE: message`` with exit status 2; the runs themselves never stop the command: a
run that fails is a failed run in the report. The exit status is 1 when no run got an answer from the
model at all (every one stopped on a model error: the endpoint is down or the model name is wrong),
and 130 after Ctrl-C, once the runs made so far are reported.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from skillhouse.errors import CallerError, SkillhouseError
from skillhouse.evals import ARMS, Arm, RunResult, Task, TaskSetError, evaluation, load_task_set
from skillhouse.evals.plans import eval_scripted_model
from skillhouse.evals.report import report_document, report_table, z_for
from skillhouse.evals.runner import ModelFor
from skillhouse.host.models import ModelConfigError, model_from_settings
from skillhouse.host.models.anthropic_messages import DEFAULT_BASE_URL as ANTHROPIC_URL
from skillhouse.host.models.base import ChatModel
from skillhouse.host.models.openai_chat import DEFAULT_BASE_URL as OPENAI_URL
from skillhouse.host.runner import RUNNER_KINDS
from skillhouse.settings import Settings

if TYPE_CHECKING:
    from rich.console import Console


class EvalUsageError(CallerError):
    """Options ``skillhouse eval`` cannot run with (``invalid-eval``): an unknown arm or task, a bad count."""

    code = "invalid-eval"


def _model_for(spec: str, settings: Settings, base_url: str | None) -> ModelFor:
    """What each run talks to: ``scripted`` plays the task's plan for the arm; anything else is one model."""
    kind, _, name = spec.partition(":")
    if kind == "scripted" and not name:

        def scripted(task: Task, arm: Arm) -> ChatModel:
            plan = task.scripted.get(arm.name)
            if plan is None:
                raise EvalUsageError(f"task {task.id} names no scripted plan for the {arm.name} arm")
            return eval_scripted_model(plan)

        return scripted
    chosen = replace(settings, model=spec)
    if base_url is not None and kind == "anthropic":
        chosen = replace(chosen, anthropic_base_url=base_url)
    elif base_url is not None:
        chosen = replace(chosen, openai_base_url=base_url)
    model = model_from_settings(chosen)  # ModelConfigError when the spelling names nothing
    return lambda task, arm: model


def run_eval(tasks_file: Path, model: str, runs: int, arms: Sequence[str], only: Sequence[str], json_path: Path | None,
             guest: str | None, base_url: str | None, max_steps: int | None, confidence: float,
             transcripts: bool) -> int:
    """The command; its exit status."""
    from rich.console import Console  # here: start-up time

    # a report piped to a file is as wide as its table, not 80 columns
    out = Console(highlight=False, width=None if sys.stdout.isatty() else 132)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        settings = Settings.from_env()
    except ValueError as exc:
        print(f"error: invalid-settings: {exc}", file=sys.stderr)
        return 2
    try:
        task_set = load_task_set(tasks_file)
        chosen_arms = list(dict.fromkeys(arms or ARMS))
        unknown = [a for a in chosen_arms if a not in ARMS]
        if unknown:
            raise EvalUsageError(f"--arm must be one of {', '.join(ARMS)}; not {', '.join(unknown)}")
        tasks = [t for t in task_set.tasks if not only or t.id in only]
        missing = [t for t in only if t not in {task.id for task in task_set.tasks}]
        if missing:
            raise EvalUsageError(f"no task {', '.join(missing)} in {tasks_file} (tasks: {', '.join(t.id for t in task_set.tasks)})")
        if runs < 1:
            raise EvalUsageError("--runs must be 1 or more")
        z_for(confidence)
        kind = guest or settings.guest
        if kind not in RUNNER_KINDS:
            raise EvalUsageError(f"--guest must be one of {', '.join(RUNNER_KINDS)}; not {kind!r}")
        model_for = _model_for(model, settings, base_url)
        if model == "scripted":  # every plan named before the first run, not at the task that lacks one
            for task in tasks:
                for arm in chosen_arms:
                    model_for(task, ARMS[arm])
    except TaskSetError as exc:
        print(f"error: {exc.code}: {exc.path}:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return 2
    except (SkillhouseError, ModelConfigError) as exc:
        print(f"error: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    except ValueError as exc:  # an unknown scripted plan, or a confidence outside (0, 1)
        print(f"error: invalid-eval: {exc}", file=sys.stderr)
        return 2

    if kind == "wasm" and not _wasm_guest_ready(err):
        return 2
    total = len(tasks) * len(chosen_arms) * runs
    started = datetime.now(UTC)
    done: list[RunResult] = []

    def progress(result: RunResult) -> None:
        done.append(result)
        mark = "[green]ok[/green]" if result.success else "[red]failed[/red]"
        why = "" if result.success else f": {_why(result)}"
        err.print(f"[{len(done)}/{total}] {result.task} {result.arm} run {result.run}: {mark} "
                  f"({result.calls} calls, {result.seconds:.1f} s){why}")

    try:
        with evaluation(task_set, model_for, kind, max_steps, on_run=progress) as ev:
            results = ev.run(tasks, chosen_arms, runs)
            interrupted = ev.interrupted
    except SkillhouseError as exc:
        print(f"error: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    meta = {
        "tasks_file": str(tasks_file), "model": model, "base_url": _endpoint(model, settings, base_url),
        "guest": kind, "runs_per_task": runs,
        "started_at": started.isoformat(timespec="seconds"),
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"), "interrupted": interrupted,
    }
    if interrupted:
        err.print(f"[yellow]interrupted: {len(results)} of {total} runs made; the report is of those[/yellow]")
    out.print(report_table(results, chosen_arms, confidence, f"skillhouse eval: {tasks_file.name}, {model}, {runs} run(s) per task"))
    if json_path is not None:
        document = report_document(meta, results, chosen_arms, confidence, transcripts)
        json_path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        err.print(f"wrote {json_path}")
    if interrupted:
        return 130
    return 1 if results and all(r.stopped == "model-error" for r in results) else 0


def _endpoint(model: str, settings: Settings, base_url: str | None) -> str | None:
    """The model server the report's figures came from (its URL; never a key), or ``None`` for the scripted model."""
    kind = model.partition(":")[0]
    if kind == "openai":
        return base_url or settings.openai_base_url or OPENAI_URL
    if kind == "anthropic":
        return base_url or settings.anthropic_base_url or ANTHROPIC_URL
    return None


def _wasm_guest_ready(err: Console) -> bool:
    """Load (the first time, build for minutes) the wasm guest before the first run, saying each slow step."""
    # imported here so wasmtime loads only when the wasm guest runs
    from skillhouse.host.wasm_build import GuestBuildError
    from skillhouse.host.wasm_runner import loaded_component

    try:
        loaded_component(progress=lambda step: err.print(f"skillhouse eval: {step}"))
    except GuestBuildError as exc:
        print(f"error: guest-unavailable: the wasm guest cannot be built: {exc.message} (try --guest inprocess)",
              file=sys.stderr)
        return False
    return True


def _why(result: RunResult) -> str:
    if result.stopped != "answer":
        problem = result.error or {}
        return f"stopped: {result.stopped}" + (f" ({problem.get('code')}: {str(problem.get('message', ''))[:120]})" if problem else "")
    failed = [c for c in result.checks if not c.passed]
    last = f" (last failed call: {result.last_failure})" if result.last_failure else ""
    return "; ".join(f"{c.check}: {c.detail}" for c in failed) + last
