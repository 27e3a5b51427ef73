"""The fast entry: ``import-openapi`` and ``tools`` read from argv without Typer, click or rich.

A user runs ``skillhouse import-openapi SPEC --out DIR`` then ``skillhouse tools DIR/NAME``: two fresh
processes, each of which would spend ~75 ms importing Typer and click before any work, as much as
``tools`` itself takes on a cached release (docs/benchmarks.md, "Command line"). This module reads
those two commands' argv as click would, for the plain forms only, and calls the same bodies the Typer
commands call (:mod:`skillhouse.cli.hot_commands`). Anything it does not read completely (another
command, ``--help``, an unknown or repeated option, a missing argument, a value that starts with ``-``,
an empty value, ``--``, a shell completion request) it leaves to the Typer app, which then parses,
helps and refuses exactly as before: a usage error's message and exit status are always Typer's own.

:data:`COMMANDS` is the one list of what the fast entry accepts; a test holds it to the Typer
commands' parameters (names, flags, repeatable options, required ones, path types), so adding an
option to a Typer command without adding it here fails the suite rather than silently falling back.
"""

from __future__ import annotations

import errno
import os
import sys

# Not `from typing import TYPE_CHECKING`: typing and dataclasses are start-up time this module exists to save.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, Literal, NoReturn, TextIO

    Kind = Literal["argument", "value", "flag", "repeat"]


class Param:
    """One parameter of a command: the body's keyword, the option's name (``None``: the argument)."""

    __slots__ = ("kind", "name", "option", "path", "required")

    def __init__(
        self, name: str, option: str | None, kind: Kind, path: bool = False, required: bool = False
    ) -> None:
        self.name = name
        self.option = option
        self.kind = kind
        self.path = path
        self.required = required


class Command:
    """A command the fast entry runs: its parameters, and the body that takes them as keywords."""

    __slots__ = ("body", "name", "params")

    def __init__(self, name: str, params: tuple[Param, ...], body: Callable[..., None]) -> None:
        self.name = name
        self.params = params
        self.body = body


def _tools(**values: Any) -> None:
    from skillhouse.cli.hot_commands import tools

    tools(**values)  # the path as text: printing a kept listing needs no pathlib (a quarter of the start-up)


def _import_openapi(**values: Any) -> None:
    from skillhouse.cli.hot_commands import import_openapi

    import_openapi(**_as_paths(COMMANDS["import-openapi"], values))


COMMANDS: dict[str, Command] = {
    "tools": Command("tools", (
        Param("path", None, "argument", path=True, required=True),
        Param("provider", "--provider", "value"),
        Param("deferred", "--deferred", "flag"),
        Param("shape", "--shape", "value"),
    ), _tools),
    "import-openapi": Command("import-openapi", (
        Param("spec", None, "argument", path=True, required=True),
        Param("out_dir", "--out", "value", path=True, required=True),
        Param("name", "--name", "value"),
        Param("include", "--include", "repeat"),
        Param("exclude", "--exclude", "repeat"),
        Param("server", "--server", "value"),
        Param("report_file", "--report", "value", path=True),
        Param("verbose", "--verbose", "flag"),
        Param("allow_remote_refs", "--allow-remote-refs", "flag"),
        Param("allow_ref_root", "--allow-ref-root", "repeat", path=True),
    ), _import_openapi),
}  # fmt: skip
"""What the fast entry runs, by command name; a test holds it to the Typer commands (see above)."""


def parse(args: Sequence[str]) -> tuple[Command, dict[str, Any]] | None:
    """The command and its keyword values when ``args`` is a plain use of a fast command, else None.

    Values are text, paths too: each command's body wrapper makes them what its body takes (``Path``
    values, as Typer gives them, for ``import-openapi``)."""
    if not args or args[0] not in COMMANDS or _completion_requested():
        return None
    command = COMMANDS[args[0]]
    options = {p.option: p for p in command.params if p.option is not None}
    arguments = [p for p in command.params if p.option is None]
    flags: set[str] = set()
    words: dict[str, list[str]] = {}
    positional: list[str] = []
    rest = list(args[1:])
    while rest:
        word = rest.pop(0)
        if not word.startswith("-"):
            positional.append(word)
            continue
        name, equals, inline = word.partition("=")
        param = options.get(name)
        if param is None or (param.kind != "repeat" and (param.name in flags or param.name in words)):
            return None  # unknown (``--help`` too), ``--``, ``-x`` or repeated: Typer's to answer
        if param.kind == "flag":
            if equals:
                return None
            flags.add(param.name)
            continue
        if not equals and not rest:
            return None
        value = inline if equals else rest.pop(0)
        if not value or value.startswith("-"):
            return None  # click reads such a value, but what the user meant is Typer's to say
        words.setdefault(param.name, []).append(value)
    if len(positional) != len(arguments) or not all(positional):
        return None
    for param, word in zip(arguments, positional, strict=True):
        words[param.name] = [word]
    keywords: dict[str, Any] = {}
    for param in command.params:
        if param.kind == "flag":
            keywords[param.name] = param.name in flags
            continue
        given = words.get(param.name)
        if given is None:
            if param.required:
                return None
            keywords[param.name] = None
            continue
        if param.path and not all(_readable_or_absent(word) for word in given):
            return None  # click refuses a path that is there but not readable: its message, not ours
        keywords[param.name] = given if param.kind == "repeat" else given[0]
    return command, keywords


def _as_paths(command: Command, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with each path parameter's text made a ``Path``, as Typer gives it."""
    from pathlib import Path  # here: start-up time (see _tools)

    typed = dict(values)
    for param in command.params:
        value = values[param.name]
        if param.path and value is not None:
            typed[param.name] = [Path(word) for word in value] if param.kind == "repeat" else Path(value)
    return typed


def run_fast(args: Sequence[str], leave_after: bool = False) -> None:
    """Run ``args``' command and exit, as Typer's standalone mode would, when :func:`parse` reads it; else return.

    With ``leave_after`` (the console script's), the process ends through :func:`leave`."""
    parsed = parse(args)
    if parsed is None:
        return
    command, keywords = parsed
    _standalone(lambda: command.body(**keywords), leave_after)


def _standalone(call: Callable[[], None], leave_after: bool = False) -> NoReturn:
    """What Typer's main does around a command: exit 0 after it, 130 on Ctrl-C, 1 on a closed pipe.

    With ``leave_after``, every ending, the command's own ``SystemExit`` included, is :func:`leave`'s."""
    try:
        call()
        status = 0
    except EOFError:
        print(file=sys.stderr)
        print("Aborted!", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        status = 130
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        # the reader went away (`skillhouse tools ... | head`): no traceback at exit either
        from typing import cast  # here: only a closed pipe pays for typing

        sys.stdout = cast("TextIO", _QuietFlush(sys.stdout))
        sys.stderr = cast("TextIO", _QuietFlush(sys.stderr))
        status = 1
    except SystemExit as exc:
        if not leave_after:
            raise
        status = _exit_status(exc.code)
    if leave_after:
        leave(status)
    sys.exit(status)


def _exit_status(code: object) -> int:
    """The status the interpreter exits with for ``SystemExit(code)``, saying ``code`` as it would when it is text."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def leave(status: int) -> NoReturn:
    """End this process with ``status`` at once, without the interpreter's teardown.

    A fast command has closed every file it wrote by the time it returns; what the interpreter's way
    out would still do that anyone could see is done here first: the exit handlers run (``atexit``'s,
    and with them ``weakref.finalize`` and logging's), then stdout and stderr are flushed. What is
    skipped is freeing every module and object one by one, which was a sixth of ``tools``'
    instructions on a kept listing and 8% of ``import-openapi``'s on a small spec (docs/benchmarks.md,
    "Command line"). A process with another thread still running (no fast command starts one) exits
    the usual way, which waits for it.

    A pipe closed before the output was all written ends with status 1, as a closed pipe does during
    the command; any other failure to write it (a full disk) with the interpreter's own status for
    that, 120, and a line on stderr saying so.
    """
    threads = sys.modules.get("threading")
    if threads is not None and threads.active_count() > 1:
        sys.exit(status)
    import atexit

    atexit._run_exitfuncs()
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            if stream is not None:
                stream.flush()
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                status = status or 1
            else:
                status = 120
                _say(f"skillhouse: could not write {name}: {exc}")
    os._exit(status)


def _say(line: str) -> None:
    import contextlib  # here: only a failed write pays for it (with collections and functools)

    with contextlib.suppress(OSError):  # straight to the file descriptor: stderr's own buffer may be what failed
        os.write(2, (line + "\n").encode("utf-8", "replace"))


class _QuietFlush:
    """A stream whose ``flush`` ignores a broken pipe (the interpreter flushes stdout on the way out)."""

    def __init__(self, wrapped: TextIO) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        try:
            self.wrapped.flush()
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def _readable_or_absent(word: str) -> bool:
    # click's Path (as Typer declares it) checks only a path that exists: it must be readable
    try:
        os.stat(word)
    except OSError:
        return True
    return os.access(word, os.R_OK)


def _completion_requested() -> bool:
    # Typer answers shell completion when _<PROG>_COMPLETE is set, whatever the argv
    return any(
        key.startswith("_") and key.endswith("_COMPLETE") and value for key, value in os.environ.items()
    )
