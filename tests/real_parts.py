"""The real parts the suite runs against: PostgreSQL, a Chromium for the console, the wasm guest.

Each runs whenever this machine has it, never only when someone remembered an environment variable:

- PostgreSQL: ``SKILLHOUSE_TEST_POSTGRES_URL`` when set, otherwise a throwaway cluster this module
  starts (``initdb`` + ``pg_ctl`` on a free loopback port, as the ``postgres`` user when running as
  root, since ``initdb`` refuses root) the first time a test asks, and stops when the session ends;
- the browser: Debian's ``/usr/bin/chromium``, or a Chromium Playwright installed for itself;
- the wasm guest: the runner tests build (or find cached) the component; a passed test run on it counts.

A part that is missing skips the tests that need it, saying why, except under ``CI=true`` where it
fails them. The run's last line says which parts ran (:func:`pytest_unconfigure`); under pytest-xdist
(``make test`` runs two workers) each worker keeps its own record and the controller adds them up
(:func:`pytest_testnodedown`) before it writes that line or fails a CI run.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

POSTGRES = "PostgreSQL"
BROWSER = "browser"
WASM = "wasm guest"
PARTS = (POSTGRES, BROWSER, WASM)
_PARAMS = re.compile(r"\[(.*)\]$")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@dataclass
class _Record:
    """What happened to each part this session: ran, or why it did not."""

    ran: set[str] = field(default_factory=set)
    missing: dict[str, str] = field(default_factory=dict)

    def line(self) -> str:
        words = []
        for part in PARTS:
            if part in self.ran:
                words.append(f"{part} ran")
            elif part in self.missing:
                words.append(f"{part} skipped ({self.missing[part]})")
            else:
                words.append(f"{part} not used")
        return "real parts: " + ", ".join(words)


RECORD = _Record()


def unavailable(part: str, why: str) -> None:
    """The test cannot have ``part``: skip it (fail it under CI=true), and remember why for the summary."""
    RECORD.missing.setdefault(part, why)
    if in_ci():
        pytest.fail(f"{part} is required under CI=true: {why}", pytrace=False)
    pytest.skip(f"{part}: {why}")


def ran(part: str) -> None:
    RECORD.ran.add(part)


# --- PostgreSQL -------------------------------------------------------------------------------

@dataclass
class _Cluster:
    directory: Path
    pg_ctl: str
    user: str | None

    def stop(self) -> None:
        _as_user(self.user, [self.pg_ctl, "-D", str(self.directory / "data"), "-m", "immediate", "-w", "stop"])
        shutil.rmtree(self.directory, ignore_errors=True)


_cluster: _Cluster | None = None
_url: str | None = None
_failure: str | None = None


def _server_binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    # Debian keeps the server binaries out of PATH, one directory per major version
    versions = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), key=lambda p: p.parts[-3])
    return str(versions[-1]) if versions else None


def _as_user(user: str | None, command: list[str]) -> subprocess.CompletedProcess[str]:
    full = ["runuser", "-u", user, "--", *command] if user else command
    return subprocess.run(full, capture_output=True, text=True, timeout=120, check=False)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start_cluster() -> str:
    """Start a throwaway cluster; its URL (database ``postgres``, user ``postgres``, trust auth)."""
    global _cluster
    initdb, pg_ctl = _server_binary("initdb"), _server_binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        raise LookupError("no PostgreSQL server binaries (initdb, pg_ctl) and SKILLHOUSE_TEST_POSTGRES_URL unset")
    user = None
    directory = Path(tempfile.mkdtemp(prefix="skillhouse-pg-"))
    if os.geteuid() == 0:  # initdb refuses to run as root
        import pwd

        user = next((u for u in ("postgres", "nobody") if _has_user(u)), None)
        if user is None:
            raise LookupError("running as root and no postgres or nobody user to run initdb as")
        entry = pwd.getpwnam(user)
        os.chown(directory, entry.pw_uid, entry.pw_gid)
    data, port = directory / "data", _free_port()
    steps = [
        [initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"],
        [pg_ctl, "-D", str(data), "-l", str(directory / "log"), "-w", "-o",
         f"-p {port} -k {directory} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", "start"],
    ]
    for step in steps:
        done = _as_user(user, step)
        if done.returncode != 0:
            shutil.rmtree(directory, ignore_errors=True)
            raise LookupError(f"{Path(step[0]).name} failed: {(done.stderr or done.stdout).strip()[-300:]}")
    _cluster = _Cluster(directory, pg_ctl, user)
    return f"postgresql://postgres@127.0.0.1:{port}/postgres"


def _has_user(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def postgres_url() -> str:
    """The test server's URL (tests make a throwaway database each); skips (fails under CI) without one."""
    global _url, _failure
    if _url is None and _failure is None:
        given = os.environ.get("SKILLHOUSE_TEST_POSTGRES_URL")
        try:
            _url = given or _start_cluster()
        except (LookupError, OSError, subprocess.SubprocessError) as exc:
            _failure = str(exc)
    if _url is None:
        unavailable(POSTGRES, _failure or "unavailable")
    assert _url is not None
    ran(POSTGRES)
    return _url


# --- browser --------------------------------------------------------------------------------------

def find_chromium() -> Path | None:
    """Debian's Chromium, else the newest Chromium Playwright installed for itself, else None."""
    debian = Path("/usr/bin/chromium")
    if debian.exists():
        return debian
    cache = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    found = sorted(cache.glob("chromium-*/chrome-linux*/chrome")) + sorted(
        cache.glob("chromium_headless_shell-*/chrome-linux*/headless_shell")
    )
    return found[-1] if found else None


def chromium() -> Path:
    """The Chromium the console's browser tests drive; skips (fails under CI) without one."""
    found = find_chromium()
    if found is None:
        unavailable(BROWSER, "no /usr/bin/chromium and no Chromium installed by Playwright")
    assert found is not None
    ran(BROWSER)
    return found


# --- wasm guest -----------------------------------------------------------------------------------

def guest_cache() -> Path:
    """The suite's guest cache (``SKILLHOUSE_GUEST_CACHE``, which tests/conftest.py defaults to the
    checkout's ``.data/guest``), for settings built in code: they read no environment, and without it
    a wasm guest would be built afresh in each test's data directory."""
    return Path(os.environ["SKILLHOUSE_GUEST_CACHE"])


# --- hooks ----------------------------------------------------------------------------------------

def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # a test parametrized with the wasm runner that passed ran the component for real
    if report.when == "call" and report.passed:
        params = _PARAMS.search(report.nodeid)
        if params and "wasm" in re.split(r"[-,]", params.group(1)):
            ran(WASM)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    output = getattr(session.config, "workeroutput", None)
    if output is not None:  # a pytest-xdist worker: the controller adds its record to its own
        output[_WORKER_KEY] = {"ran": sorted(RECORD.ran), "missing": RECORD.missing}
        return
    if in_ci() and RECORD.missing and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_WORKER_KEY = "skillhouse_real_parts"


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """Under pytest-xdist (``-n``) each worker keeps its own record: the controller takes in each one's as it ends,
    so the last line and the CI=true check speak for the whole run."""
    record = getattr(node, "workeroutput", {}).get(_WORKER_KEY)
    if record is None:  # a worker that crashed sent none; its tests are reported failed already
        return
    RECORD.ran.update(record["ran"])
    for part, why in record["missing"].items():
        RECORD.missing.setdefault(part, why)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _cluster
    # here rather than in pytest_terminal_summary, so the line comes after pytest's own summary;
    # a pytest-xdist worker's terminal goes nowhere: the controller writes the line for the run
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and not hasattr(config, "workerinput"):
        reporter.write_line(RECORD.line())
    if _cluster is not None:
        _cluster.stop()
        _cluster = None
