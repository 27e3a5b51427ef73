"""The fast entry (:mod:`skillhouse.cli.fast`) runs ``import-openapi`` and ``tools`` without Typer, and
must be indistinguishable from the Typer commands: the same stdout, stderr, exit status and files, and
every argv it does not read completely left to Typer, which then answers as it always did.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.corpus import corpus_spec
from tests.openapi.specs import openapi
from typer.main import get_command
from typer.models import TyperPath
from typer.testing import CliRunner

from skillhouse.cli import app, hot_commands, main
from skillhouse.cli.fast import COMMANDS, parse, run_fast

Outcome = tuple[int, str, str]
"""Exit status, stdout, stderr."""


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("SKILLHOUSE_RELEASE_CACHE", str(directory))
    return directory


def through_typer(args: list[str]) -> Outcome:
    result = CliRunner().invoke(app, args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def through_fast_entry(args: list[str], capsys: pytest.CaptureFixture[str]) -> Outcome:
    assert parse(args) is not None, args
    capsys.readouterr()
    with pytest.raises(SystemExit) as ended:
        run_fast(args)
    out, err = capsys.readouterr()
    return int(ended.value.code or 0), out, err


def through_main(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Outcome:
    monkeypatch.setattr(sys, "argv", ["skillhouse", *args])
    capsys.readouterr()
    with pytest.raises(SystemExit) as ended:
        main()
    out, err = capsys.readouterr()
    return int(ended.value.code or 0), out, err


def files_under(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def small_spec(tmp_path: Path) -> Path:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(openapi({
        "/items/{id}": {"get": {"operationId": "getItem", "tags": ["items"], "parameters": [
            {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]}},
        "/items": {"post": {"operationId": "addItem", "requestBody": {"content": {"application/json": {
            "schema": {"type": "object", "properties": {"name": {"type": "string", "description": "Ünïcode name"}}}}}}}},
    })))  # fmt: skip
    return spec


def test_the_fast_entry_takes_exactly_the_typer_commands_parameters() -> None:
    group = get_command(app)
    assert hasattr(group, "commands")
    for name, command in COMMANDS.items():
        declared = group.commands[name].params
        assert all(len(p.opts) == 1 and not p.secondary_opts for p in declared), name  # no aliases, no --no-x
        typer_side = {
            (p.name, None if p.param_type_name == "argument" else p.opts[0],
             "argument" if p.param_type_name == "argument" else "flag" if getattr(p, "is_flag", False)
             else "repeat" if p.multiple else "value",
             isinstance(p.type, TyperPath), p.required)
            for p in declared
        }  # fmt: skip
        fast_side = {(p.name, p.option, p.kind, p.path, p.required) for p in command.params}
        assert fast_side == typer_side, name
    # the bodies take the parameters by the same names
    assert list(inspect.signature(hot_commands.tools).parameters) == [
        p.name for p in COMMANDS["tools"].params
    ]
    assert list(inspect.signature(hot_commands.import_openapi).parameters) == [
        p.name for p in COMMANDS["import-openapi"].params
    ]


def test_plain_argv_is_read_as_click_reads_it() -> None:
    command, values = parse(["import-openapi", "--include", "tag:a", "s.yaml", "--out=o", "--include=b", "--verbose",
                             "--allow-ref-root", "common"]) or (None, {})  # fmt: skip
    assert command is COMMANDS["import-openapi"]
    assert values == {
        "spec": "s.yaml", "out_dir": "o", "name": None, "include": ["tag:a", "b"], "exclude": None,
        "server": None, "report_file": None, "verbose": True, "allow_remote_refs": False, "allow_ref_root": ["common"],
    }  # fmt: skip
    assert parse(["tools", "skill", "--provider", "openai"]) == (
        COMMANDS["tools"],
        {"path": "skill", "provider": "openai", "deferred": False, "shape": None},
    )


def test_import_openapi_gets_its_paths_as_typer_gives_them(monkeypatch: pytest.MonkeyPatch) -> None:
    # parse keeps words as text (tools reads a kept listing without pathlib); import-openapi's body takes Paths
    seen: dict[str, object] = {}
    monkeypatch.setattr(hot_commands, "import_openapi", lambda **values: seen.update(values))
    command, values = parse(["import-openapi", "s.yaml", "--out", "o", "--report", "r.json",
                             "--allow-ref-root", "a", "--allow-ref-root", "b"]) or (None, {})  # fmt: skip
    assert command is not None
    command.body(**values)
    assert (
        seen["spec"] == Path("s.yaml")
        and seen["out_dir"] == Path("o")
        and seen["report_file"] == Path("r.json")
    )
    assert (
        seen["allow_ref_root"] == [Path("a"), Path("b")] and seen["include"] is None and seen["name"] is None
    )


@pytest.mark.parametrize("args", [
    [], ["--help"], ["check", "skill"], ["tools"], ["tools", "a", "b"], ["tools", "skill", "--help"], ["tools", "--help"],
    ["tools", "skill", "--nope"], ["tools", "skill", "--provider"], ["tools", "skill", "--provider", "a", "--provider", "b"],
    ["tools", "skill", "--deferred", "--deferred"], ["tools", "skill", "--deferred=true"], ["tools", "--", "skill"],
    ["tools", "-"], ["tools", ""], ["tools", "skill", "--provider", ""], ["tools", "skill", "--provider", "--deferred"],
    ["tools", "skill", "-h"], ["import-openapi", "spec.json"], ["import-openapi", "--out", "o"],
    ["import-openapi", "spec.json", "--out", "o", "--out", "p"], ["import-openapi", "spec.json", "--out", "o", "--include"],
])  # fmt: skip
def test_argv_the_fast_entry_does_not_read_completely_is_left_to_typer(args: list[str]) -> None:
    assert parse(args) is None


def test_a_shell_completion_request_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_SKILLHOUSE_COMPLETE", "bash_complete")
    assert parse(["tools", "skill"]) is None


@pytest.mark.parametrize("spec_name", ["small", "petstore-v3.yaml", "readme-3.0-discriminators.json"])
def test_import_then_tools_print_and_write_the_same_either_way(
    spec_name: str, tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = small_spec(tmp_path) if spec_name == "small" else corpus_spec(spec_name)
    out = tmp_path / "out"
    runs = [["import-openapi", str(spec), "--out", str(out), "--report", str(tmp_path / "report.json")]]
    if spec_name == "small":
        runs += [["import-openapi", str(spec), "--out", str(out), "--verbose", "--name", "shop", "--exclude", "addItem"],
                 ["import-openapi", str(spec), "--include=tag:items", "--out", str(out), "--server", "https://x.test/v2"]]  # fmt: skip
    for imported in runs:
        seen = []
        for run in (through_typer, lambda args: through_fast_entry(args, capsys)):
            for stale in (out, cache):
                for path in sorted(stale.rglob("*"), reverse=True) if stale.exists() else []:
                    path.unlink() if path.is_file() else path.rmdir()
            outcomes = [run(imported)]
            skill = next(out.iterdir())
            written = files_under(out)
            outcomes += [run(["tools", str(skill)]), run(["tools", str(skill), "--provider", "anthropic"]),
                         run(["tools", str(skill), "--provider", "openai", "--shape", "responses"])]  # fmt: skip
            seen.append((outcomes, written))
        (typer_outcomes, typer_files), (fast_outcomes, fast_files) = seen
        assert fast_outcomes == typer_outcomes
        assert fast_files == typer_files
        assert [code for code, _, _ in fast_outcomes] == [0, 0, 0, 0]


def test_refusals_say_the_same_and_exit_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = small_spec(tmp_path)
    (tmp_path / "a-file").write_text("not a directory")
    (tmp_path / "not-a-skill").mkdir()
    imported = through_typer(["import-openapi", str(spec), "--out", str(tmp_path / "skills")])
    skill = next((tmp_path / "skills").iterdir())
    assert imported[0] == 0
    cases = [
        ["import-openapi", str(tmp_path / "missing.json"), "--out", str(tmp_path / "o")],  # no such spec
        ["import-openapi", str(tmp_path / "a-file"), "--out", str(tmp_path / "o")],  # not a spec
        ["import-openapi", str(spec), "--out", str(tmp_path / "a-file")],  # --out is a file
        [
            "import-openapi",
            str(spec),
            "--out",
            str(tmp_path / "o"),
            "--allow-ref-root",
            str(tmp_path / "a-file"),
        ],
        ["tools", str(tmp_path / "not-a-skill")],  # nothing to compile
        ["tools", str(tmp_path / "missing")],
        ["tools", str(skill), "--deferred"],  # --deferred without --provider
        ["tools", str(skill), "--shape", "chat"],
        ["tools", str(skill), "--provider", "nobody"],  # unknown provider
    ]
    for args in cases:
        typer_side = through_typer(args)
        assert typer_side[0] != 0, args
        assert through_fast_entry(args, capsys) == typer_side, args
    monkeypatch.setenv("SKILLHOUSE_TELEMETRY", "sometimes")  # a malformed setting: one line, exit 2
    for args in (["tools", str(skill)], ["import-openapi", str(spec), "--out", str(tmp_path / "o")]):
        typer_side = through_typer(args)
        assert typer_side[0] == 2 and "invalid-settings" in typer_side[2]
        assert through_fast_entry(args, capsys) == typer_side


@pytest.mark.parametrize("args", [
    ["tools", "SKILL", "--nope"], ["tools", "SKILL", "--help"], ["import-openapi", "SPEC"], ["tools"],
    ["import-openapi", "SPEC", "--out", "o", "--out", "p"], ["tools", "SKILL", "--provider"], ["nonsense"],
])  # fmt: skip
def test_what_the_fast_entry_leaves_gets_typers_own_answer(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a relative --out lands here
    args = [a.replace("SKILL", str(tmp_path)).replace("SPEC", str(small_spec(tmp_path))) for a in args]
    assert parse(args) is None
    typer_side = through_typer(args)
    assert through_main(args, capsys, monkeypatch) == typer_side


# The console script's way in, in a fresh interpreter: records which modules it loaded when it exits
# (taken before the record's own json, which imports re and functools, is imported).
WRAPPER = """
import atexit, os, sys
def record():
    loaded = sorted(sys.modules)
    import json
    open(os.environ["MODULES_OUT"], "w").write(json.dumps(loaded))
atexit.register(record)
sys.argv = ["skillhouse", *sys.argv[1:]]
if os.environ.get("THROUGH") == "typer":
    from skillhouse.cli import command_app
    command_app(sys.argv[1:])()
else:
    from skillhouse.cli import main
    main()
"""


def in_a_fresh_process(args: list[str], through: str, tmp_path: Path) -> tuple[Outcome, set[str]]:
    record = tmp_path / "modules.json"
    env = {**os.environ, "MODULES_OUT": str(record), "THROUGH": through}
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, *args], env=env, capture_output=True, text=True, timeout=120
    )
    return (done.returncode, done.stdout, done.stderr), set(json.loads(record.read_text()))


def top_level(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_as_a_user_runs_them_no_typer_click_or_rich_is_imported_and_the_output_is_typers(
    tmp_path: Path, cache: Path
) -> None:
    # Four fresh interpreters (~2 s): the in-process tests above cannot see what a process imports.
    spec = small_spec(tmp_path)
    seen = []
    for through in ("typer", "fast"):
        out = tmp_path / through
        imported, modules = in_a_fresh_process(
            ["import-openapi", str(spec), "--out", str(out)], through, tmp_path
        )
        listed, listing_modules = in_a_fresh_process(["tools", str(out / "test-api")], through, tmp_path)
        seen.append((imported[0], imported[1], imported[2].replace(str(out), "OUT"), listed))
        loaded = top_level(modules | listing_modules)
        assert ("typer" in loaded) == (through == "typer")
        if through == "fast":
            assert loaded & {"typer", "click", "rich", "typing_extensions"} == set()
            # printing the kept listing builds no Settings and no Path: the dataclass (with the inspect and
            # typing it imports) and pathlib (with re, fnmatch, urllib.parse) were two thirds of that process's
            # start-up; functools (with collections) was another 2 ms of its ~15, for one cached fingerprint.
            heavy = {
                "skillhouse.settings",
                "dataclasses",
                "inspect",
                "typing",
                "pathlib",
                "re",
                "fnmatch",
                "urllib.parse",
                "functools",
                "collections",
            }
            assert listing_modules & heavy == set()
            assert {"skillhouse.settings_env", "skillhouse.release_cache"} <= listing_modules
    assert seen[0] == seen[1]
    assert seen[1][0] == 0 and json.loads(seen[1][3][1])[0]["name"].startswith("test-api_")
