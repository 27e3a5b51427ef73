"""Where ``import-openapi`` and ``export`` write a skill, and how an import shows its progress.

One rule for both commands: ``--out DIR`` names the parent, and the skill goes to ``DIR/NAME``. An
existing ``DIR/NAME`` is rewritten only when it is a skill (it has a ``SKILL.md``) or empty but for a
``curation.yaml`` waiting for the first import, so a mistyped ``--out`` never scatters files into a
directory that holds something else.

Progress goes to standard error whether or not it is a terminal: a live bar on a terminal, plain
lines otherwise (a log or a CI job keeps them), and it covers the parse of the spec, which is most of
the wait on a large one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import TracebackType

from skillhouse.errors import CallerError

# Not `from typing import TYPE_CHECKING`: typing is start-up time the fast entry does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rich.console import Console
    from rich.progress import Progress, TaskID


_CURATION = ("curation.yaml", "curation.applied.json")


class _LazyConsole:
    """A rich Console made on first use: importing rich costs ~25 ms of start-up most commands never need."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=self._stderr, highlight=False, soft_wrap=True)
        return getattr(self._console, name)


if TYPE_CHECKING:
    err: Console
    """The commands' rich console on stderr (markup such as ``[red]``, plain text when not a terminal)."""
    out: Console
    """The same on stdout."""
else:
    err = _LazyConsole(stderr=True)
    out = _LazyConsole(stderr=False)


class OutRefused(CallerError):
    """``--out`` cannot take the skill: ``code`` says why (``out-not-a-directory``, ``out-not-a-skill``)."""

    code = "out-not-a-directory"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code=code)


def skill_directory(parent: Path, name: str) -> Path:
    """``parent/name``, once sure that writing a skill there replaces nothing but a skill."""
    if parent.exists() and not parent.is_dir():
        raise OutRefused("out-not-a-directory", f"--out {parent} is a file; give the directory the skill goes in")
    target = parent / name
    if target.exists() and not target.is_dir():
        raise OutRefused("out-not-a-directory", f"{target} is a file, not a skill directory")
    # a curation.yaml written before the first import is the skill's too: it is applied, never replaced
    if target.is_dir() and any(e.name not in _CURATION for e in target.iterdir()) and not (target / "SKILL.md").is_file():
        raise OutRefused("out-not-a-skill", f"{target} holds files but no SKILL.md; it is not a skill to rewrite")
    return target


def skill_directory_or_exit(parent: Path, name: str) -> Path:
    """:func:`skill_directory`, or the refusal printed as ``error: CODE: message`` and exit status 2."""
    try:
        return skill_directory(parent, name)
    except OutRefused as exc:
        print(f"error: {exc.code}: {exc.message}", file=sys.stderr)
        raise SystemExit(2) from None  # not typer.Exit: the fast entry runs without Typer


def _size(path: Path) -> str:
    size = path.stat().st_size
    return f"{size / 1_000_000:.1f} MB" if size >= 1_000_000 else f"{max(1, size // 1000)} KB"


class ImportProgress:
    """The import's progress on stderr: parsing the spec, then operations done out of the total."""

    STEPS = 10
    """Plain output prints a line each tenth of the operations, not one per operation."""

    def __init__(self) -> None:
        self.live = sys.stderr.isatty()
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.shown_step = -1

    def __enter__(self) -> ImportProgress:
        if self.live:
            # imported here: rich costs ~25 ms of start-up that a quiet import never needs
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("starting", total=None)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        if self.bar is not None:
            self.bar.stop()

    def parsing(self, spec: Path) -> None:
        self._say(f"parsing {spec.name} ({_size(spec)})")

    def operations(self, done: int, total: int) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, description="importing operations", completed=done, total=total)
            return
        step = done * self.STEPS // max(total, 1)
        if step > self.shown_step:
            self.shown_step = step
            print(f"importing operations: {done}/{total}", file=sys.stderr, flush=True)

    def _say(self, message: str) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, description=message)
        else:
            print(message, file=sys.stderr, flush=True)
