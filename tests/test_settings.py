"""Settings read every environment variable, each field names the variable that sets it, and
docs/configuration.md is generated from the fields (``docs/hooks/configuration.py``).

The reading is ``skillhouse/settings_env.py``'s (``Settings.from_env`` builds from it; the CLI's hot
commands take their one value from it without the dataclass), and nothing else in ``src`` reads the
environment: a new ``os.environ`` or ``getenv`` outside it fails here unless it passes a child process's
environment through and is named in :data:`PASSED_THROUGH` with the reason.
"""

from __future__ import annotations

import dataclasses
import re
import string
import subprocess
import sys
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from docs.hooks.configuration import SECTIONS, field_docs, render, render_page, rows, shown_default, variable

from skillhouse import settings_env
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
    return [
        number for number, line in enumerate(text.splitlines(), 1) if ENV_READ.search(line.split("#", 1)[0])
    ]


def variables() -> dict[str, set[str]]:
    """Each variable the fields name (their own, and those a computed default reads) and the fields it sets."""
    found: dict[str, set[str]] = {}
    for field in dataclasses.fields(Settings):
        named = variable(field)
        for name in (named.name, *named.also):
            found.setdefault(name, set()).add(field.name)
    return found


def test_the_environment_is_read_in_settings_and_nowhere_else_in_src() -> None:
    found = {}
    for source in sorted(SRC.rglob("*.py")):
        relative = source.relative_to(SRC).as_posix()
        lines = env_reads(source.read_text(encoding="utf-8"))
        if lines and relative != "settings_env.py":
            found[relative] = lines
    assert {name: len(lines) for name, lines in found.items()} == dict.fromkeys(PASSED_THROUGH, 1), (
        "read settings through skillhouse.settings.Settings, not the environment: " + repr(found)
    )


@pytest.mark.parametrize(
    "line",
    [
        'token = os.environ.get("SKILLHOUSE_TOKEN", "")',
        'token = os.getenv("SKILLHOUSE_TOKEN")',
        "from os import environ",
        "from os import path, environ as env",
        "env = dict(os.environ)",
    ],
)
def test_the_scan_catches_each_spelling_of_an_environment_read(line: str) -> None:
    assert env_reads(f"import os\n{line}\n") == [2]


def test_the_scan_ignores_comments_and_words_that_only_look_alike() -> None:
    assert env_reads("# os.environ is read in settings.py\nenvironment = {}\nSettings.from_env(env)\n") == []


def test_every_variable_settings_reads_is_named_by_a_field_and_every_named_one_is_read() -> None:
    env = RecordingEnv()
    Settings.from_env(env)
    assert set(variables()) == env.asked


def test_the_page_has_a_row_for_every_field_with_its_variable_type_default_and_docstring() -> None:
    docs = field_docs()
    listed = {cells[1].strip("`"): cells for section in SECTIONS for cells in rows(section)}
    assert set(listed) == {f.name for f in dataclasses.fields(Settings)}
    assert sum(len(rows(section)) for section in SECTIONS) == len(listed)  # each field in one table
    for field in dataclasses.fields(Settings):
        named, cells = variable(field), listed[field.name]
        assert cells[0] == f"`{named.name}`" and cells[3] == shown_default(field)
        assert docs[field.name].split()[0].replace("``", "`") in cells[4], field.name
        # a default computed from another variable says which
        assert all(f"`{other}`" in cells[3] or f"${other}" in cells[3] for other in named.also), field.name
    assert listed["key_lease_seconds"][2:4] == ("`float`", "`45`")
    assert listed["guest_cache"][2:4] == ("`Path | None`", "unset")
    assert listed["resolve"][2:4] == ("`dict[tuple[str, int], str]`", "none")


def test_the_defaults_shown_are_those_from_env_gives() -> None:
    # from_env with nothing set builds what Settings() holds, so each field's default is the variable's
    assert Settings.from_env({}) == Settings()


def test_the_page_keeps_its_prose_and_fills_every_marker() -> None:
    text = DOC.read_text(encoding="utf-8")
    page = render_page(text)
    assert "<!-- settings:" not in page and "## The model: `POST /v1/turns/{id}/run`" in page
    assert all(render(section) in page for section in SECTIONS)
    with pytest.raises(ValueError, match="marker"):
        render_page(text.replace("<!-- settings: cli -->", ""))
    with pytest.raises(ValueError, match="section 'client'"):
        render("client")


@pytest.mark.parametrize("row", sorted(variables().items()), ids=lambda row: row[0])
def test_each_variable_sets_the_fields_that_name_it(row: tuple[str, set[str]], tmp_path: Path) -> None:
    name, fields = row
    samples = {
        "SKILLHOUSE_RESOLVE": "a.example:80=127.0.0.1,acme/b.example:80=127.0.0.2",
        "SKILLHOUSE_PRIVATE_HOSTS": "a.example,acme/b.example",
        "SKILLHOUSE_DEFERRED": "yes",
        "SKILLHOUSE_GUEST": "inprocess",
        "SKILLHOUSE_DATABASE_URL": "sqlite:///elsewhere.db",
        "SKILLHOUSE_TELEMETRY": "otlp",
        "SKILLHOUSE_TRACE_UPSTREAMS": "yes",
        "SKILLHOUSE_LOG_FORMAT": "json",
    }
    value = samples.get(name) or (
        "7" if name.endswith(("_SECONDS", "_CALLS", "_BYTES", "_TIMEOUT")) else str(tmp_path / "x")
    )
    before, after = Settings.from_env({}), Settings.from_env({name: value})
    changed = {
        f.name for f in dataclasses.fields(Settings) if getattr(before, f.name) != getattr(after, f.name)
    }
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
    settings = Settings.from_env(
        {
            "SKILLHOUSE_SECRET_KEY": "k" * 44,
            "OPENAI_API_KEY": "sk-secret",
            "ANTHROPIC_API_KEY": "sk-ant-secret",
            "SKILLHOUSE_TOKEN": "skh_secret",
            "SKILLHOUSE_CONSOLE_SECRET": "console-secret",
        }
    )
    shown = repr(settings)
    assert not any(
        secret in shown for secret in ("k" * 44, "sk-secret", "sk-ant-secret", "skh_secret", "console-secret")
    )


def test_the_reading_gives_a_value_for_each_field_and_nothing_else() -> None:
    assert sorted(settings_env.read_environment({})) == sorted(f.name for f in dataclasses.fields(Settings))


# One sample per variable that release_cache and guest_cache_dir depend on, and one malformed value of every variable that
# is checked: the light reading must agree with from_env on each, value or refusal.
CACHE_SAMPLES = [
    {}, {"SKILLHOUSE_RELEASE_CACHE": "off"}, {"SKILLHOUSE_RELEASE_CACHE": "/somewhere/releases"},
    {"SKILLHOUSE_RELEASE_CACHE": ""}, {"XDG_CACHE_HOME": "/xdg/cache"},
    {"XDG_CACHE_HOME": "/xdg/cache", "SKILLHOUSE_RELEASE_CACHE": "relative/dir"},
    {"SKILLHOUSE_RELEASE_CACHE": "OFF"}, {"SKILLHOUSE_DATA_DIR": "/data", "SKILLHOUSE_TOKEN": "skh_x"},
    {"XDG_CACHE_HOME": "/xdg//cache/"}, {"SKILLHOUSE_RELEASE_CACHE": "/a/./b//"},
    {"SKILLHOUSE_GUEST_CACHE": "/guests"}, {"SKILLHOUSE_GUEST_CACHE": "relative/guests/", "SKILLHOUSE_DATA_DIR": "/d"},
    {"SKILLHOUSE_DATA_DIR": "/data//here/"}, {"SKILLHOUSE_GUEST_CACHE": ""},
]  # fmt: skip
MALFORMED = {
    "SKILLHOUSE_RESOLVE": "no-port=1.2.3.4", "SKILLHOUSE_PRIVATE_HOSTS": "Not A Tenant/db.internal",
    "SKILLHOUSE_TELEMETRY": "sometimes", "SKILLHOUSE_LOG_FORMAT": "xml", "SKILLHOUSE_DEFERRED": "maybe",
    "SKILLHOUSE_TRACE_UPSTREAMS": "2", "SKILLHOUSE_UPSTREAM_MAX_BYTES": "-1",
    "SKILLHOUSE_TENANT_UPSTREAM_CALLS": "many", **{name: "a day" for name in (
        "SKILLHOUSE_KEY_LEASE_SECONDS", "SKILLHOUSE_KEY_WAIT_SECONDS", "SKILLHOUSE_KEY_TTL_SECONDS",
        "SKILLHOUSE_APPROVAL_TTL_SECONDS", "SKILLHOUSE_UPSTREAM_DEADLINE_SECONDS",
        "SKILLHOUSE_TENANT_SLOT_WAIT_SECONDS", "SKILLHOUSE_MODEL_TIMEOUT", "SKILLHOUSE_SHUTDOWN_SECONDS")},
}  # fmt: skip


@pytest.mark.parametrize("env", CACHE_SAMPLES, ids=repr)
def test_the_light_reading_of_the_release_cache_is_from_envs(env: dict[str, str]) -> None:
    light, settings = settings_env.release_cache(env), Settings.from_env(env)
    assert (None if light is None else Path(light)) == settings.release_cache  # the same directory, as text
    assert Path(settings_env.guest_cache_dir(env)) == settings.guest_cache_dir()
    assert settings_env.read_environment(env) == {
        f.name: getattr(settings, f.name) for f in dataclasses.fields(Settings)
    } | {"database_url": env.get("SKILLHOUSE_DATABASE_URL", "")}  # from_env fills in the SQLite default


def test_every_path_field_is_read_as_a_path() -> None:
    # settings_env reads paths as text and names the fields it makes Path values: a path field it left out
    # would hold text
    hints = typing.get_type_hints(Settings)
    paths = {f.name for f in dataclasses.fields(Settings) if "Path" in str(hints[f.name])}
    env = {variable(f).name: f"/set/{f.name}" for f in dataclasses.fields(Settings) if f.name in paths}
    settings = Settings.from_env(env)
    assert paths and all(getattr(settings, name) == Path(f"/set/{name}") for name in paths)


@pytest.mark.parametrize(
    "home", ["/home/someone", "/home/someone/", "//net/home", "/home//someone", "relative"]
)
def test_the_default_directories_are_those_path_home_gives(
    home: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # read as text without pathlib; the same directories as Path.home() / ".cache" / ... names
    monkeypatch.setenv("HOME", home)
    assert Path(settings_env.default_release_cache({})) == Path.home() / ".cache" / "skillhouse" / "releases"
    assert Path(settings_env.default_data_dir({})) == Path.home() / ".local" / "share" / "skillhouse"
    assert Settings().release_cache == Path.home() / ".cache" / "skillhouse" / "releases"


def test_every_checked_variable_has_a_malformed_sample() -> None:
    # a variable that can be malformed is one whose field is not a plain string or a path
    checked = {
        name
        for name, fields in variables().items()
        if any(not isinstance(getattr(Settings(), field), (str, Path, type(None))) for field in fields)
    }
    assert checked | {"SKILLHOUSE_TELEMETRY", "SKILLHOUSE_LOG_FORMAT"} == set(MALFORMED)


@pytest.mark.parametrize(("name", "value"), sorted(MALFORMED.items()))
def test_the_light_reading_refuses_what_from_env_refuses_in_the_same_words(name: str, value: str) -> None:
    with pytest.raises(ValueError, match=name) as from_env:
        Settings.from_env({name: value})
    for light_reading in (settings_env.release_cache, settings_env.guest_cache_dir):
        with pytest.raises(ValueError) as light:
            light_reading({name: value})
        assert str(light.value) == str(from_env.value)


def test_the_light_reading_imports_neither_the_dataclass_machinery_nor_pathlib() -> None:
    # the reason it is a module apart: `skillhouse tools` reads the release cache without ~45 ms of imports
    code = ("import sys, skillhouse.settings_env as s; s.release_cache()\n"
            "print(' '.join(sorted(sys.modules)))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    assert "skillhouse.settings_env" in loaded
    assert (
        loaded & {"skillhouse.settings", "dataclasses", "inspect", "typing", "pathlib", "re", "base64", "binascii"}
        == set()  # binascii: a shared library, loaded only when the process's console secret is made
    )


def test_the_process_console_secret_is_what_secrets_token_urlsafe_makes() -> None:
    secret = settings_env.PROCESS_CONSOLE_SECRET
    assert len(secret) == 43 and set(secret) <= set(string.ascii_letters + string.digits + "-_")
    assert Settings().console_secret == Settings.from_env({}).console_secret == secret
