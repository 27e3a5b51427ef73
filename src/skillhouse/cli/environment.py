"""The settings a command runs with: :meth:`Settings.from_env`, or one line and exit status 2.

Every command that needs a setting (the release cache, the token, the database) reads them here, so
a malformed variable is said the same way by each: ``error: invalid-settings: <what and where>``.
``import-openapi`` and ``tools`` need the release cache only: :func:`release_cache_or_exit` reads it
through :mod:`skillhouse.settings_env` (the same reading, every variable checked) without importing the
``Settings`` dataclass, ~30 ms of each process's start-up (nor ``pathlib``: the directory comes as text).
"""

from __future__ import annotations

import sys

# Not `from typing import TYPE_CHECKING`: typing is start-up time the fast entry does without.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

    from skillhouse.settings import Settings


def settings_or_exit() -> Settings:
    """This process's settings; a malformed variable ends the command with one line naming it (exit 2)."""
    from skillhouse.settings import Settings  # here: start-up time (see release_cache_or_exit)

    try:
        return Settings.from_env()
    except ValueError as exc:
        _refuse(exc)


def release_cache_or_exit() -> str | None:
    """``settings_or_exit().release_cache``, without building the settings; exits alike on a malformed variable."""
    from skillhouse.settings_env import release_cache

    try:
        return release_cache()
    except ValueError as exc:
        _refuse(exc)


def _refuse(problem: ValueError) -> NoReturn:
    print(f"error: invalid-settings: {problem}", file=sys.stderr)
    raise SystemExit(2) from None  # not typer.Exit: the fast entry runs without Typer
