"""Running a task set: every task, in every arm, ``runs`` times, each run on a fresh upstream and tenant.

A run binds the task's skills in the arm's tool profile (:mod:`skillhouse.evals.arms`) and lets the
model work through the guest's agent loop, every request going through a real gateway (a SQLite store
in a temporary directory: approvals, idempotency keys and the audit log are the gateway's own) to the
upstream the harness started on loopback. When the gateway held a request for approval, the harness
decides it as the task file says, through the gateway's approvals (what ``POST
/v1/approvals/{id}/approve`` and the console call), and tells the agent, which repeats the call. Then
the checks read the upstream's state.

What a run measures: whether every check passed; the tool calls the model made, and how many of them
failed (refused, or answered with an HTTP error status; a call held for approval is not a failure);
the model's token counts (the provider's ``usage`` fields, summed over the run's completions); wrong
side effects (items on the upstream a check did not ask for) and duplicates (more matching items than
it asked for); and the run's wall-clock time, model and upstream included.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from threading import Thread
from typing import Any
from urllib.parse import urlsplit

import httpx
from cryptography.fernet import Fernet

from skillhouse.compiler import compile_dir
from skillhouse.compiler.eager_tools import EAGER_TOOLS
from skillhouse.errors import CallerError
from skillhouse.evals.arms import ARMS, Arm
from skillhouse.evals.tasks import AnswerCheck, StateCheck, Task, TaskSet
from skillhouse.examples import HollowbrookHTTPServer
from skillhouse.examples.hollowbrook_house import Guesthouse
from skillhouse.gateway import BoundReleases, Gateway, GatewayConfig, TurnContext
from skillhouse.host import make_runner
from skillhouse.host.models.base import ChatModel
from skillhouse.json_types import JsonObject, ModelAnswer, ModelRequest, ReleaseDocument
from skillhouse.store.database import open_database

ModelFor = Callable[[Task, Arm], ChatModel]
"""The model a run of ``task`` in ``arm`` talks to (a scripted model plays the task's plan for the arm)."""

MAX_APPROVAL_ROUNDS = 3
EAGER_NAMES = frozenset(str(t["name"]) for t in EAGER_TOOLS)


class SkillsUnusable(CallerError):
    """A task set names skills that do not compile or are not in the file (``invalid-task-set``)."""

    code = "invalid-task-set"


@dataclass
class CheckResult:
    check: str
    passed: bool
    detail: str
    wrong: int = 0
    duplicate: int = 0

    def document(self) -> JsonObject:
        return {"check": self.check, "passed": self.passed, "detail": self.detail,
                "wrong": self.wrong, "duplicate": self.duplicate}


@dataclass
class RunResult:
    """One run of one task in one arm."""

    task: str
    arm: str
    run: int
    success: bool = False
    stopped: str = ""
    error: JsonObject | None = None
    calls: int = 0
    failed_calls: int = 0
    last_failure: str | None = None
    """What the last failed call answered, in a line: ``HTTP 415 unsupported-media-type``, ``unknown-tool``."""
    model_calls: int = 0
    off_profile_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    approvals: list[JsonObject] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)
    seconds: float = 0.0
    final: str | None = None
    transcript: list[JsonObject] = field(default_factory=list)

    @property
    def wrong(self) -> int:
        return sum(c.wrong for c in self.checks)

    @property
    def duplicate(self) -> int:
        return sum(c.duplicate for c in self.checks)

    def document(self, with_transcript: bool = False) -> JsonObject:
        out: JsonObject = {
            "task": self.task, "arm": self.arm, "run": self.run, "success": self.success, "stopped": self.stopped,
            "error": self.error, "calls": self.calls, "failed_calls": self.failed_calls,
            "last_failure": self.last_failure, "model_calls": self.model_calls,
            "off_profile_calls": self.off_profile_calls,
            "tokens": {"input": self.input_tokens, "output": self.output_tokens},
            "wrong_side_effects": self.wrong, "duplicate_side_effects": self.duplicate,
            "approvals": self.approvals, "checks": [c.document() for c in self.checks],
            "seconds": round(self.seconds, 3), "final": self.final,
        }
        if with_transcript:
            out["messages"] = self.transcript
        return out


class Meter:
    """A model's ``complete``, counted: completions, the provider's token usage, calls to tools not offered.

    ``system`` rewrites the system prompt the guest wrote before the model reads it (the arm's opening).

    A call to an eager tool the arm does not offer (``load_tools`` in the raw arm) is renamed
    ``NAME (not offered)`` before the guest sees it, so it is refused as an unknown tool, as it would be
    in a guest that never had it, rather than run by the guest that implements it.
    """

    def __init__(self, model: ChatModel, system: Callable[[str], str] | None = None) -> None:
        self.model = model
        self.system = system
        self.completions = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.off_profile = 0

    def complete(self, request: ModelRequest) -> ModelAnswer:
        self.completions += 1
        if self.system is not None and isinstance(request.get("system"), str):
            request = {**request, "system": self.system(request["system"])}
        answer = self.model.complete(request)
        usage = answer.pop("usage", None) if isinstance(answer, dict) else None
        if isinstance(usage, dict):
            self.input_tokens += int(usage.get("input_tokens") or 0)
            self.output_tokens += int(usage.get("output_tokens") or 0)
        # a deferred operation is offered too: the guest loads it when it is called by name
        offered = {str(t.get("name")) for key in ("tools", "deferred") for t in request.get(key) or [] if isinstance(t, dict)}
        for call in answer.get("tool_calls") or [] if isinstance(answer, dict) else []:
            name = call.get("name") if isinstance(call, dict) else None
            if isinstance(name, str) and name not in offered:
                self.off_profile += 1
                if name in EAGER_NAMES:
                    call["name"] = f"{name} (not offered)"
        return answer


@dataclass
class Upstream:
    """The upstream the runs act on: the Hollowbrook house on loopback, its state fresh for every run."""

    server: HollowbrookHTTPServer
    authorities: frozenset[tuple[str, int]]
    client: httpx.Client
    """What the checks read the upstream's state with."""

    def reset(self) -> None:
        self.server.house = Guesthouse()

    @property
    def url(self) -> str:
        return self.server.url


@contextmanager
def running_upstream(releases: Sequence[ReleaseDocument]) -> Iterator[Upstream]:
    """The house on an ephemeral loopback port, serving every host the releases' operations name."""
    authorities: set[tuple[str, int]] = set()
    for release in releases:
        for op in release.get("operations", []):
            parts = urlsplit(str(op["url"]))
            if parts.hostname:
                authorities.add((parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)))
    server = HollowbrookHTTPServer(("127.0.0.1", 0))
    thread = Thread(target=server.serve_forever, args=(0.05,), name="eval-upstream", daemon=True)
    thread.start()
    try:
        with httpx.Client(timeout=10) as client:
            yield Upstream(server, frozenset(authorities), client)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def compile_skills(task_set: TaskSet) -> dict[str, ReleaseDocument]:
    """The task set's skills compiled, by name; every task's skills must be among them."""
    releases: dict[str, ReleaseDocument] = {}
    problems: list[str] = []
    for directory in task_set.skill_dirs:
        compiled, errors = compile_dir(directory)
        if compiled is None:
            problems.extend(str(e) for e in errors)
            continue
        releases[str(compiled.document["skill"])] = compiled.document
    for task in task_set.tasks:
        for name in task.skills:
            # a skill that did not compile has no name to look up: its errors above say enough
            if name not in releases and not problems:
                problems.append(f"task {task.id}: no skill {name!r} among the file's skills ({', '.join(releases)})")
    if problems:
        raise SkillsUnusable(f"{task_set.path}: " + "; ".join(problems))
    return releases


@dataclass
class Evaluation:
    """Everything the runs share: the task set's releases, the upstream, the gateway, the guest kind."""

    task_set: TaskSet
    releases: dict[str, ReleaseDocument]
    upstream: Upstream
    gateway: Gateway
    guest: str
    model_for: ModelFor
    max_steps: int
    on_run: Callable[[RunResult], None] | None = None
    interrupted: bool = False
    """Whether Ctrl-C ended :meth:`run` before every run was made."""
    _serial: int = 0

    def run(self, tasks: Sequence[Task], arms: Sequence[str], runs: int) -> list[RunResult]:
        """Every task in every arm, ``runs`` times: the runs of a task's arms interleaved, so drift over
        time (a server's load, a provider's mood) falls on both arms alike."""
        results: list[RunResult] = []
        try:
            for task in tasks:
                for index in range(1, runs + 1):
                    for arm in arms:
                        result = self.run_once(task, ARMS[arm], index)
                        results.append(result)
                        if self.on_run is not None:
                            self.on_run(result)
        except KeyboardInterrupt:
            self.interrupted = True  # Ctrl-C: the runs so far are still reported
        return results

    def run_once(self, task: Task, arm: Arm, index: int) -> RunResult:
        self._serial += 1
        tenant, turn_id = f"eval-{self._serial}", f"turn_eval_{self._serial}"
        self.upstream.reset()
        releases = [self.releases[name] for name in (task.skills or tuple(self.releases))]
        context = TurnContext(tenant, turn_id, BoundReleases(releases))
        meter = Meter(self.model_for(task, arm), arm.system)
        host = arm.host(releases, fetch=lambda request: self.gateway.fetch(context, request), complete=meter.complete)
        result = RunResult(task.id, arm.name, index)
        started = time.perf_counter()
        runner = make_runner(host, self.guest)
        try:
            transcript = self._converse(runner, task, arm, tenant, result)
        except Exception as exc:  # one run's breakage is that run's failure, said in the report, not the end of the eval
            code = getattr(exc, "code", None)
            transcript = {"stopped": "harness-error", "messages": [],
                          "error": {"code": code if isinstance(code, str) else "harness-error",
                                    "message": f"{type(exc).__name__}: {exc}"}}
        finally:
            close = getattr(runner, "close", None)
            if close is not None:
                close()
        result.seconds = time.perf_counter() - started
        messages = list(transcript.get("messages") or [])
        result.transcript = messages
        result.stopped = str(transcript.get("stopped") or "")
        result.error = transcript.get("error") if isinstance(transcript.get("error"), dict) else None
        result.final = transcript.get("final") if isinstance(transcript.get("final"), str) else None
        result.calls = sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")
        failures = [_failure(m.get("content")) for m in messages if m.get("role") == "tool"]
        result.failed_calls = sum(1 for f in failures if f is not None)
        result.last_failure = next((f for f in reversed(failures) if f is not None), None)
        result.model_calls = meter.completions
        result.off_profile_calls = meter.off_profile
        result.input_tokens, result.output_tokens = meter.input_tokens, meter.output_tokens
        result.checks = [self._check(check, result.final) for check in task.checks]
        result.success = result.stopped == "answer" and all(c.passed for c in result.checks)
        return result

    def _converse(self, runner: Any, task: Task, arm: Arm, tenant: str, result: RunResult) -> JsonObject:
        """The turn: the prompt, then for each round of held requests the task's decision and the agent told."""
        request: JsonObject = {"prompt": task.prompt, "max_steps": self.max_steps}
        transcript = _turn(runner, request)
        decided: set[str] = set()
        for _ in range(MAX_APPROVAL_ROUNDS):
            held = [a for a in _held_approvals(transcript["messages"]) if a not in decided]
            if task.approval == "leave" or not held or transcript.get("stopped") != "answer":
                break
            for approval_id in held:
                decided.add(approval_id)
                approve = task.approval == "approve"
                self.gateway.approvals.decide(tenant, approval_id, approve, by="skillhouse eval",
                                              note=None if approve else "the evaluation's task says to deny it")
                result.approvals.append({"approval_id": approval_id, "decision": task.approval})
            messages = [*transcript["messages"], {"role": "user", "content": task.after_approval}]
            request = {key: value for key, value in request.items() if key != "prompt"} | {"messages": messages}
            transcript = _turn(runner, request)
        return transcript

    def _check(self, check: StateCheck | AnswerCheck, final: str | None) -> CheckResult:
        if isinstance(check, AnswerCheck):
            missing = [t for t in check.texts if t.lower() not in (final or "").lower()]
            detail = "mentioned" if not missing else "does not mention " + ", ".join(repr(t) for t in missing)
            return CheckResult(check.describe(), not missing, detail)
        try:
            answer = self.upstream.client.get(self.upstream.url + check.get).json()
        except (httpx.HTTPError, ValueError) as exc:
            return CheckResult(check.describe(), False, f"the upstream's state could not be read: {exc}")
        items = answer.get(check.list_key) if check.list_key and isinstance(answer, dict) else answer
        if not isinstance(items, list):
            return CheckResult(check.describe(), False, f"GET {check.get} answered no list{' under ' + repr(check.list_key) if check.list_key else ''}")
        matching = [i for i in items if isinstance(i, dict) and all(i.get(k) == v for k, v in check.where.items())]
        wrong = len(items) - len(matching)
        duplicate = max(0, len(matching) - check.count)
        passed = wrong == 0 and len(matching) == check.count
        detail = f"{len(matching)} matching, {wrong} other" + ("" if passed else f" (wanted {check.count} matching, no other)")
        return CheckResult(check.describe(), passed, detail, wrong, duplicate)


def _turn(runner: Any, request: JsonObject) -> JsonObject:
    transcript: JsonObject = json.loads(runner.run_turn(json.dumps(request, ensure_ascii=False)))
    return transcript


def _failure(content: Any) -> str | None:
    """A tool's answer, as the model read it, in a line when it failed: refused (by the guest or the
    gateway: its code) or answered with an HTTP error status (and the body's error code, if it has one).
    A call held for approval has not failed."""
    try:
        answer = json.loads(content) if isinstance(content, str) else content
    except json.JSONDecodeError:
        return None
    if not isinstance(answer, dict):
        return None
    problem, status = answer.get("error"), answer.get("status")
    if isinstance(problem, dict):
        return None if problem.get("code") == "approval-required" else str(problem.get("code") or "error")
    if isinstance(status, int) and status >= 400:
        body = answer.get("body")
        said = body.get("error") if isinstance(body, dict) else None
        code = said.get("code") if isinstance(said, dict) else None
        return f"HTTP {status}" + (f" {code}" if isinstance(code, str) else "")
    return None


def _held_approvals(messages: Sequence[JsonObject]) -> list[str]:
    """The approval ids of every ``approval-required`` answer in the transcript, in order, once each."""
    found: list[str] = []
    for message in messages:
        if message.get("role") != "tool" or not isinstance(message.get("content"), str):
            continue
        try:
            answer = json.loads(message["content"])
        except json.JSONDecodeError:
            continue
        problem = answer.get("error") if isinstance(answer, dict) else None
        held = problem.get("approval_id") if isinstance(problem, dict) and problem.get("code") == "approval-required" else None
        if held and str(held) not in found:
            found.append(str(held))
    return found


@contextmanager
def evaluation(task_set: TaskSet, model_for: ModelFor, guest: str, max_steps: int | None = None,
               on_run: Callable[[RunResult], None] | None = None) -> Iterator[Evaluation]:
    """The upstream, a gateway over a store in a temporary directory, and the compiled skills, until the block ends."""
    releases = compile_skills(task_set)
    with ExitStack() as stack:
        upstream = stack.enter_context(running_upstream(list(releases.values())))
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="skillhouse-eval-")))
        database = open_database(f"sqlite:///{scratch / 'eval.db'}")
        stack.callback(database.dispose)
        resolve = {authority: f"127.0.0.1:{upstream.server.port}" for authority in upstream.authorities}
        gateway = Gateway(database, GatewayConfig(resolve=resolve), secret_key=Fernet.generate_key().decode())
        stack.callback(gateway.close)
        yield Evaluation(task_set, releases, upstream, gateway, guest, model_for, max_steps or task_set.max_steps, on_run)
