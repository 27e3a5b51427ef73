"""A task set: the YAML file ``skillhouse eval`` reads, checked whole before anything runs.

::

    skills: [../hollowbrook]        # skill package directories, relative to this file
    upstream: hollowbrook           # the upstream the harness runs, fresh for every run
    max_steps: 16                   # the agent loop's bound for each turn (default 16)
    tasks:
      - id: book-and-charge
        prompt: Book a double room ... and charge the stay.
        skills: [hollowbrook]       # the skills the turn binds (default: every skill of the file)
        approval: approve           # approve, deny or leave what the gateway holds (default: leave)
        after_approval: ...         # what the agent is told once a person has decided (a default says so)
        checks:                     # on the upstream's state after the run
          - get: /bookings          # a GET on the upstream ...
            list: bookings          # ... whose answer holds the list under this key (default: it is the list)
            count: 1                # exactly this many items match ``where``
            where: {room_id: 2, arrival: "2031-06-01"}
          - answer_contains: [bk_0001]   # the final answer says these (case-insensitive)
        scripted: {tools: PLAN, raw: PLAN}   # what ``--model scripted`` plays in each arm

An item of a ``get`` check that does not match ``where`` is a wrong side effect; matching items beyond
``count`` are duplicates. Every problem in the file is reported at once, each with where it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from skillhouse.errors import CallerError

UPSTREAMS = ("hollowbrook",)
APPROVALS = ("approve", "deny", "leave")
DEFAULT_MAX_STEPS = 16
DEFAULT_AFTER_APPROVAL = {
    "approve": "A person has approved the request that was held for approval. Repeat that same call once "
               "to complete it, then tell me the outcome.",
    "deny": "A person has denied the request that was held for approval. Do not send it again; tell me "
            "the outcome.",
}
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


class TaskSetError(CallerError):
    """A task file that cannot be run (``invalid-task-set``); ``problems`` names every problem with its place."""

    code = "invalid-task-set"

    def __init__(self, path: Path, problems: list[str]) -> None:
        super().__init__(f"{path}: " + "; ".join(problems))
        self.path = path
        self.problems = problems


@dataclass(frozen=True)
class StateCheck:
    """``GET path`` on the upstream: exactly ``count`` items match ``where``, and no item does not."""

    get: str
    count: int
    where: dict[str, Any] = field(default_factory=dict)
    list_key: str | None = None

    def describe(self) -> str:
        where = ", ".join(f"{k}={v!r}" for k, v in self.where.items())
        return f"exactly {self.count} of GET {self.get}" + (f" with {where}" if where else "")


@dataclass(frozen=True)
class AnswerCheck:
    """The final answer mentions every one of ``texts`` (case-insensitive)."""

    texts: tuple[str, ...]

    def describe(self) -> str:
        return "the answer mentions " + ", ".join(repr(t) for t in self.texts)


Check = StateCheck | AnswerCheck


@dataclass(frozen=True)
class Task:
    id: str
    prompt: str
    skills: tuple[str, ...]
    checks: tuple[Check, ...]
    approval: str = "leave"
    after_approval: str = ""
    scripted: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskSet:
    path: Path
    skill_dirs: tuple[Path, ...]
    upstream: str
    max_steps: int
    tasks: tuple[Task, ...]


def load_task_set(path: Path) -> TaskSet:
    """The task set in ``path``; :class:`TaskSetError` with every problem when it cannot be run."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TaskSetError(path, [f"cannot read it: {exc.strerror or exc}"]) from None
    except yaml.YAMLError as exc:
        raise TaskSetError(path, [f"not YAML: {exc}"]) from None
    problems: list[str] = []
    if not isinstance(data, dict):
        raise TaskSetError(path, ["the file must be a mapping with skills, upstream and tasks"])
    _unknown(data, {"skills", "upstream", "max_steps", "tasks"}, "", problems)
    skill_dirs: list[Path] = []
    for index, entry in enumerate(_list(data.get("skills"), "skills", problems)):
        if not isinstance(entry, str) or not entry.strip():
            problems.append(f"skills[{index}]: a skill package directory")
            continue
        directory = (path.parent / entry).resolve()
        if not directory.is_dir():
            problems.append(f"skills[{index}]: {entry} is not a directory (relative to the task file)")
        skill_dirs.append(directory)
    upstream = data.get("upstream", "hollowbrook")
    if upstream not in UPSTREAMS:
        problems.append(f"upstream: one of {', '.join(UPSTREAMS)}")
    max_steps = data.get("max_steps", DEFAULT_MAX_STEPS)
    if not isinstance(max_steps, int) or isinstance(max_steps, bool) or not 1 <= max_steps <= 100:
        problems.append("max_steps: a whole number from 1 to 100")
        max_steps = DEFAULT_MAX_STEPS
    tasks: list[Task] = []
    seen: set[str] = set()
    for index, entry in enumerate(_list(data.get("tasks"), "tasks", problems)):
        task = _task(entry, f"tasks[{index}]", problems)
        if task is None:
            continue
        if task.id in seen:
            problems.append(f"tasks[{index}].id: {task.id!r} is used twice")
        seen.add(task.id)
        tasks.append(task)
    if problems:
        raise TaskSetError(path, problems)
    return TaskSet(path, tuple(skill_dirs), str(upstream), max_steps, tuple(tasks))


def _list(value: Any, where: str, problems: list[str]) -> list[Any]:
    if not isinstance(value, list) or not value:
        problems.append(f"{where}: a non-empty list")
        return []
    return value


def _unknown(entry: dict[str, Any], known: set[str], where: str, problems: list[str]) -> None:
    for key in entry:
        if key not in known:
            problems.append(f"{where}{'.' if where else ''}{key}: not a field here (fields: {', '.join(sorted(known))})")


def _task(entry: Any, where: str, problems: list[str]) -> Task | None:
    if not isinstance(entry, dict):
        problems.append(f"{where}: a mapping with id, prompt and checks")
        return None
    _unknown(entry, {"id", "prompt", "skills", "approval", "after_approval", "checks", "scripted"}, where, problems)
    task_id = entry.get("id")
    if not isinstance(task_id, str) or not _ID.match(task_id):
        problems.append(f"{where}.id: lower-case letters, digits, - and _")
        task_id = f"task-{where}"
    prompt = entry.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        problems.append(f"{where}.prompt: the user's request, as text")
        prompt = ""
    skills = entry.get("skills", [])
    if not isinstance(skills, list) or not all(isinstance(s, str) and s for s in skills):
        problems.append(f"{where}.skills: a list of skill names")
        skills = []
    approval = entry.get("approval", "leave")
    if approval not in APPROVALS:
        problems.append(f"{where}.approval: one of {', '.join(APPROVALS)}")
        approval = "leave"
    after = entry.get("after_approval", DEFAULT_AFTER_APPROVAL.get(approval, ""))
    if not isinstance(after, str):
        problems.append(f"{where}.after_approval: text")
        after = ""
    scripted = entry.get("scripted", {})
    if not isinstance(scripted, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in scripted.items()):
        problems.append(f"{where}.scripted: a mapping of arm to plan name")
        scripted = {}
    checks = [_check(c, f"{where}.checks[{i}]", problems) for i, c in enumerate(_list(entry.get("checks"), f"{where}.checks", problems))]
    return Task(str(task_id), str(prompt).strip(), tuple(skills), tuple(c for c in checks if c is not None),
                str(approval), after.strip(), dict(scripted))


def _check(entry: Any, where: str, problems: list[str]) -> Check | None:
    if isinstance(entry, dict) and "answer_contains" in entry:
        _unknown(entry, {"answer_contains"}, where, problems)
        texts = entry["answer_contains"]
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t for t in texts):
            problems.append(f"{where}.answer_contains: text, or a list of texts")
            return None
        return AnswerCheck(tuple(texts))
    if not isinstance(entry, dict) or not isinstance(entry.get("get"), str) or not str(entry["get"]).startswith("/"):
        problems.append(f"{where}: a state check (get: /PATH, count, where) or answer_contains")
        return None
    _unknown(entry, {"get", "list", "count", "where"}, where, problems)
    count = entry.get("count", 1)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        problems.append(f"{where}.count: a whole number, 0 or more")
        count = 1
    conditions = entry.get("where", {})
    if not isinstance(conditions, dict):
        problems.append(f"{where}.where: a mapping of field to the value it must have")
        conditions = {}
    list_key = entry.get("list")
    if list_key is not None and not isinstance(list_key, str):
        problems.append(f"{where}.list: the key of the answer's list")
        list_key = None
    return StateCheck(str(entry["get"]), count, {str(k): v for k, v in conditions.items()}, list_key)
