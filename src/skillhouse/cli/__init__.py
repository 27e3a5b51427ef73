"""The ``skillhouse`` command.

:func:`main` runs ``import-openapi`` and ``tools``, the two commands a user runs back to back on every
import, through :mod:`skillhouse.cli.fast` when it reads their argv completely, and everything else
through the Typer app in :mod:`skillhouse.cli.commands`. Importing Typer and click is ~75 ms of each
process's start-up, as much as the whole work of ``tools`` on a small skill; both paths run the same
command bodies (:mod:`skillhouse.cli.hot_commands`), so they print the same bytes and exit alike.

``app`` and ``command_app`` are the Typer app's, loaded on first use (PEP 562): importing this package,
as the console script and ``python -m skillhouse.cli`` do, imports no Typer.
"""

from __future__ import annotations

import sys

# Not `from typing import TYPE_CHECKING`: typing is start-up time the fast entry does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from skillhouse.cli.commands import app as app
    from skillhouse.cli.commands import command_app as command_app

_TYPER_NAMES = ("app", "command_app")


def __getattr__(name: str) -> Any:
    if name not in _TYPER_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from skillhouse.cli import commands  # here: start-up time, Typer only when the Typer app runs

    return getattr(commands, name)


def main(*, leave: bool = False) -> None:
    """``skillhouse ARGS``: the fast entry when it reads ARGS completely, else the Typer app.

    With ``leave``, a command the fast entry ran ends the process through :func:`skillhouse.cli.fast.leave`."""
    args = sys.argv[1:]
    from skillhouse.cli.fast import run_fast  # stdlib and the command bodies only

    run_fast(args, leave)  # exits when it ran the command
    from skillhouse.cli.commands import command_app  # here: start-up time (see above)

    command_app(args)()


def console() -> None:
    """The ``skillhouse`` console script (and ``python -m skillhouse.cli``): :func:`main`, a fast command
    ending the process without the interpreter's teardown (:func:`skillhouse.cli.fast.leave`)."""
    main(leave=True)
