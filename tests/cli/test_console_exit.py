"""The console script's fast commands end their process without the interpreter's teardown
(:func:`skillhouse.cli.fast.leave`), and nothing anyone could see changes: the whole output arrives, the files
are written, exit handlers run, the exit status is the command's, a closed pipe or a full disk is said as
before, and a thread still running is waited for.

Each case runs a fresh interpreter: ``python -m skillhouse.cli``, which is the console script's
:func:`skillhouse.cli.console` (tests/test_installed_wheel.py runs the installed script itself).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.corpus import corpus_spec
from tests.openapi.specs import openapi

from skillhouse.compiler import neutral_tool
from skillhouse.openapi import import_openapi


def buffered(**variables: str) -> dict[str, str]:
    """This environment with stdout buffered as a user's is (a test runner may set ``PYTHONUNBUFFERED``)."""
    return {**{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}, **variables}


def skillhouse(
    args: list[str], tmp_path: Path, stdout: int = subprocess.PIPE, stderr: int = subprocess.PIPE
) -> subprocess.CompletedProcess[bytes]:
    env = buffered(SKILLHOUSE_DATA_DIR=str(tmp_path / "data"), SKILLHOUSE_RELEASE_CACHE=str(tmp_path / "release-cache"))
    return subprocess.run([sys.executable, "-m", "skillhouse.cli", *args], env=env, timeout=300, check=False,
                          stdout=stdout, stderr=stderr)  # fmt: skip


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Jira's spec imported through the console script (468 tools: a listing far past any pipe's buffer); the skill
    directory and the scratch directory the command ran with."""
    scratch = tmp_path_factory.mktemp("console")
    done = skillhouse(["import-openapi", str(corpus_spec("jira-platform.json")), "--out", str(scratch / "out")], scratch)
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().rstrip().splitlines()[-1].startswith("wrote ")  # the last line, flushed at the end
    (skill,) = (scratch / "out").iterdir()
    return skill, scratch


def test_the_whole_listing_arrives_and_the_import_wrote_every_file(imported: tuple[Path, Path]) -> None:
    skill, scratch = imported
    listed = skillhouse(["tools", str(skill)], scratch)

    assert listed.returncode == 0, listed.stderr
    expected = [neutral_tool(op) for op in import_openapi(corpus_spec("jira-platform.json")).compiled.document["operations"]]  # type: ignore[union-attr]
    assert json.loads(listed.stdout) == expected
    assert len(listed.stdout) > 1 << 19  # many times any pipe's buffer
    assert len(list(skill.glob("*.md"))) == len(expected) + 1  # every operation's file and the skill's own


def test_exit_handlers_run_before_the_process_ends(imported: tuple[Path, Path]) -> None:
    skill, scratch = imported
    code = ("import atexit, sys; atexit.register(lambda: print('handler ran', file=sys.stderr)); "
            "sys.argv = ['skillhouse', 'tools', sys.argv[1]]; from skillhouse.cli import console; console()")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code, str(skill)], capture_output=True, timeout=120, check=False,
                          env=buffered(SKILLHOUSE_RELEASE_CACHE=str(scratch / "release-cache")))  # fmt: skip

    assert (done.returncode, done.stderr) == (0, b"handler ran\n")
    assert json.loads(done.stdout)[0]["name"].startswith("the-jira-cloud-platform-rest-api_")


def test_a_command_s_own_exit_status_and_message_are_kept(tmp_path: Path) -> None:
    done = skillhouse(["import-openapi", str(tmp_path / "missing.json"), "--out", str(tmp_path / "out")], tmp_path)

    assert done.returncode == 2
    assert done.stderr.decode().startswith("error: unreadable-spec: ")


def test_a_pipe_closed_before_the_output_was_read_ends_with_status_1_and_no_traceback(
    imported: tuple[Path, Path],
) -> None:
    skill, scratch = imported
    reading, writing = os.pipe()
    os.close(reading)  # nobody will read: the first write fails with EPIPE (Python ignores SIGPIPE)
    try:
        done = skillhouse(["tools", str(skill)], scratch, stdout=writing)
    finally:
        os.close(writing)

    assert (done.returncode, done.stderr) == (1, b"")


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """A one-operation skill imported through the console script: its listing fits the output's buffer, so
    the command writes nothing itself and the output goes out when the process leaves."""
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(openapi({"/items/{id}": {"get": {"operationId": "getItem", "parameters": [
        {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]}}})))  # fmt: skip
    done = skillhouse(["import-openapi", str(spec), "--out", str(tmp_path / "out")], tmp_path)
    assert done.returncode == 0, done.stderr
    (skill,) = (tmp_path / "out").iterdir()
    listed = skillhouse(["tools", str(skill)], tmp_path)
    assert listed.returncode == 0 and 0 < len(listed.stdout) < 4096
    return skill


def test_a_buffered_output_whose_reader_went_away_ends_with_status_1_and_no_traceback(
    small: Path, tmp_path: Path
) -> None:
    # the interpreter's own way out said "Exception ignored in: <_io.TextIOWrapper name='<stdout>' ...>
    # BrokenPipeError: [Errno 32] Broken pipe" and ended with 120
    reading, writing = os.pipe()
    os.close(reading)
    try:
        done = skillhouse(["tools", str(small)], tmp_path, stdout=writing)
    finally:
        os.close(writing)

    assert (done.returncode, done.stderr) == (1, b"")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_buffered_output_a_full_disk_refused_is_said_with_the_interpreter_s_status() -> None:
    # a regular file on a full disk, as the interpreter's stdout buffers it (its stdout on /dev/full itself is unbuffered)
    code = ("import sys; sys.stdout = open('/dev/full', 'w'); print('kept in the buffer'); "
            "from skillhouse.cli.fast import leave; leave(0)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False, env=buffered())

    assert (done.returncode, done.stderr) == (120, b"skillhouse: could not write stdout: [Errno 28] No space left on device\n")


def test_a_thread_still_running_is_waited_for(tmp_path: Path) -> None:
    code = ("import threading, time; from skillhouse.cli.fast import leave; "
            "threading.Thread(target=lambda: (time.sleep(0.3), print('thread done', flush=True))).start(); leave(3)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False, env=buffered())

    assert (done.returncode, done.stdout) == (3, b"thread done\n")


def test_leave_flushes_what_was_printed_and_exits_with_the_status() -> None:
    code = "import sys; from skillhouse.cli.fast import leave; print('out', end=''); sys.stderr.write('err'); leave(4)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False, env=buffered())

    assert (done.returncode, done.stdout, done.stderr) == (4, b"out", b"err")
