"""Settings read every environment variable, and docs/configuration.md lists each one with its field.

Nothing else in ``src`` reads the environment: a new ``os.environ`` or ``getenv`` outside
``skillhouse/settings.py`` fails here unless it passes a child process's environment through and is
named in :data:`PASSED_THROUGH` with the reason.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from skillhouse.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "skillhouse"
DOC = ROOT / "docs" / "configuration.md"

ENV_READ = re.compile(r"\bos\.environ\b|\bgetenv\b|\benviron\s*\[|\bfrom\s+os\s+import\s+[^\n]*\benviron\b")

PASSED_THROUGH = {
    "demo.py": "the demo's server and CLI processes get the environment it was started with, and read it "
               "through Settings themselves",
    "host/wasm_build.py": "componentize-py gets the environment it was started with, less the virtualenv's "
                          "site-packages (not a setting of ours)",
    "cli/fast.py": "the fast entry leaves a shell completion request to Typer: it looks for Typer's own "
                   "_<PROG>_COMPLETE variable (not a setting of ours), as Typer would",
}
"""Files (under ``src/skillhouse``) that hand ``os.environ`` to a child process, or look for a library's
own variable, once each, and why."""


class RecordingEnv(Mapping[str, str]):
    """An environment that remembers every name looked up in it."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self.values = dict(values or {})
        self.asked: set[str] = set()

    def __getitem__(self, name: str) -> str:
        self.asked.add(name)
        return self.values[name]

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("Settings.from_env must ask for variables by name, never list them")

    def __len__(self) -> int:
        return len(self.values)


def env_reads(text: str) -> list[int]:
    """The line numbers of ``text`` that read the environment."""
    return [number for number, line in enumerate(text.splitlines(), 1)
            if ENV_READ.search(line.split("#", 1)[0])]


def documented() -> list[tuple[str, set[str]]]:
    """Each row of the doc's tables: the variable and the fields it sets."""
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 4:
            rows.append((cells[0].strip("`"), set(re.findall(r"`([a-z_]+)`", cells[1]))))
    return rows


def test_the_environment_is_read_in_settings_and_nowhere_else_in_src() -> None:
    found = {}
    for source in sorted(SRC.rglob("*.py")):
        relative = source.relative_to(SRC).as_posix()
        lines = env_reads(source.read_text(encoding="utf-8"))
        if lines and relative != "settings.py":
            found[relative] = lines
    assert {name: len(lines) for name, lines in found.items()} == dict.fromkeys(PASSED_THROUGH, 1), (
        "read settings through skillhouse.settings.Settings, not the environment: " + repr(found))


@pytest.mark.parametrize("line", [
    'token = os.environ.get("SKILLHOUSE_TOKEN", "")',
    'token = os.getenv("SKILLHOUSE_TOKEN")',
    "from os import environ",
    "from os import path, environ as env",
    'env = dict(os.environ)',
])
def test_the_scan_catches_each_spelling_of_an_environment_read(line: str) -> None:
    assert env_reads(f"import os\n{line}\n") == [2]


def test_the_scan_ignores_comments_and_words_that_only_look_alike() -> None:
    assert env_reads("# os.environ is read in settings.py\nenvironment = {}\nSettings.from_env(env)\n") == []


def test_every_variable_settings_reads_is_documented_and_every_documented_one_is_read() -> None:
    env = RecordingEnv()
    Settings.from_env(env)
    assert {variable for variable, _ in documented()} == env.asked


def test_every_field_of_settings_is_documented_and_every_documented_field_exists() -> None:
    rows = documented()
    assert all(fields for _, fields in rows), "each row names the field its variable sets"
    assert set().union(*(fields for _, fields in rows)) == {f.name for f in dataclasses.fields(Settings)}


@pytest.mark.parametrize("row", documented(), ids=lambda row: row[0])
def test_each_documented_variable_sets_the_fields_its_row_names(row: tuple[str, set[str]], tmp_path: Path) -> None:
    variable, fields = row
    samples = {"SKILLHOUSE_RESOLVE": "a.example:80=127.0.0.1,acme/b.example:80=127.0.0.2",
               "SKILLHOUSE_PRIVATE_HOSTS": "a.example,acme/b.example", "SKILLHOUSE_DEFERRED": "yes",
               "SKILLHOUSE_GUEST": "inprocess", "SKILLHOUSE_DATABASE_URL": "sqlite:///elsewhere.db",
               "SKILLHOUSE_TELEMETRY": "otlp", "SKILLHOUSE_TRACE_UPSTREAMS": "yes", "SKILLHOUSE_LOG_FORMAT": "json"}
    value = samples.get(variable) or ("7" if variable.endswith(("_SECONDS", "_CALLS", "_BYTES", "_TIMEOUT"))
                                      else str(tmp_path / "x"))
    before, after = Settings.from_env({}), Settings.from_env({variable: value})
    changed = {f.name for f in dataclasses.fields(Settings) if getattr(before, f.name) != getattr(after, f.name)}
    if "data_dir" in fields:
        changed.discard("database_url")  # the default database lives in the data directory
    assert changed == fields


def test_settings_built_in_code_read_nothing_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLHOUSE_GUEST_CACHE", "/elsewhere/guest")
    monkeypatch.setenv("SKILLHOUSE_MODEL", "scripted")
    monkeypatch.setenv("XDG_DATA_HOME", "/elsewhere/data")
    settings = Settings()
    assert settings.guest_cache_dir() == settings.data_dir / "guest" != Path("/elsewhere/guest")
    assert settings.model == "" and not str(settings.data_dir).startswith("/elsewhere")


def test_a_malformed_flag_is_refused_naming_its_variable() -> None:
    with pytest.raises(ValueError, match="SKILLHOUSE_DEFERRED"):
        Settings.from_env({"SKILLHOUSE_DEFERRED": "maybe"})
    assert Settings.from_env({"SKILLHOUSE_DEFERRED": "0"}).deferred is False


def test_secrets_stay_out_of_the_settings_repr() -> None:
    settings = Settings.from_env({"SKILLHOUSE_SECRET_KEY": "k" * 44, "OPENAI_API_KEY": "sk-secret",
                                  "ANTHROPIC_API_KEY": "sk-ant-secret", "SKILLHOUSE_TOKEN": "skh_secret",
                                  "SKILLHOUSE_CONSOLE_SECRET": "console-secret"})
    shown = repr(settings)
    assert not any(secret in shown for secret in ("k" * 44, "sk-secret", "sk-ant-secret", "skh_secret",
                                                  "console-secret"))
