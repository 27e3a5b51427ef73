"""The settings a command runs with: :meth:`Settings.from_env`, or one line and exit status 2.

Every command that needs a setting (the release cache, the token, the database) reads them here, so
a malformed variable is said the same way by each: ``error: invalid-settings: <what and where>``.
"""

from __future__ import annotations

import sys

from skillhouse.settings import Settings


def settings_or_exit() -> Settings:
    """This process's settings; a malformed variable ends the command with one line naming it (exit 2)."""
    try:
        return Settings.from_env()
    except ValueError as exc:
        print(f"error: invalid-settings: {exc}", file=sys.stderr)
        raise SystemExit(2) from None  # not typer.Exit: the fast entry runs without Typer
