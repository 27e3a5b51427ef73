"""``skillhouse NAME ...`` runs on an app holding only NAME: it must read and answer exactly as the full app.

:func:`skillhouse.cli.command_app` narrows the app to the invoked command so start-up does not build
every other command; these tests hold it to the full app's behaviour for every command and group.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from skillhouse.cli import app, command_app

COMMANDS = [command.name or command.callback.__name__.replace("_", "-") for command in app.registered_commands if command.callback]
GROUPS = [str(group.name) for group in app.registered_groups]


def test_every_command_and_group_is_found_by_name() -> None:
    for name in COMMANDS + GROUPS:
        narrow = command_app([name, "--help"])
        assert narrow is not app, name
        assert len(narrow.registered_commands) + len(narrow.registered_groups) == 1, name


@pytest.mark.parametrize("name", COMMANDS + GROUPS)
def test_a_commands_help_is_the_same_through_the_narrowed_app(name: str) -> None:
    full = CliRunner().invoke(app, [name, "--help"])
    narrow = CliRunner().invoke(command_app([name, "--help"]), [name, "--help"])
    assert (narrow.exit_code, narrow.output) == (full.exit_code, full.output)
    assert full.exit_code == 0 and f"skillhouse {name}" in full.output


@pytest.mark.parametrize("args", [["tools"], ["check", "--nope"], ["translate", "a"], ["import-openapi", "spec.json"],
                                  ["tokens", "nope"], ["keys"]])
def test_a_usage_error_is_the_same_through_the_narrowed_app(args: list[str]) -> None:
    full = CliRunner().invoke(app, args)
    narrow = CliRunner().invoke(command_app(args), args)
    assert (narrow.exit_code, narrow.output) == (full.exit_code, full.output)
    assert full.exit_code == 2


@pytest.mark.parametrize("args", [[], ["--help"], ["nonsense"], ["--nope", "tools"]])
def test_anything_but_a_command_name_first_gets_the_full_app(args: list[str]) -> None:
    assert command_app(args) is app
