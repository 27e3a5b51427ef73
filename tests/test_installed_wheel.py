"""Installed from a wheel, on a fresh venv outside the checkout, skillhouse works: the wheel carries what
the wasm guest is built from, and ``skillhouse serve`` runs a call in that guest end to end.

The wheel is built from the tracked files copied out of the checkout, installed with pip into a new
venv (its dependencies from pip's cache or the index), and only the installed commands run, with the
checkout nowhere on their path. The guest cache is the suite's (``SKILLHOUSE_GUEST_CACHE``), so the
guest is not built again unless its sources changed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from cryptography.fernet import Fernet
from tests.api.served import free_port
from tests.conftest import HOLLOWBROOK, ROOT
from tests.openapi.specs import openapi

# what the wheel must hold besides modules: each was once left behind by a wheel that built fine
PACKAGE_DATA = (
    "skillhouse/py.typed",
    "skillhouse/host/wit/agent.wit",
    "skillhouse/host/wasm_app/agent_app.py",
    "skillhouse/guest/guest.py",
    "skillhouse/store/migrations/env.py",
    "skillhouse/store/migrations/script.py.mako",
    "skillhouse/store/migrations/versions/0001_registry.py",
    "skillhouse/api/console/templates/base.html",
    "skillhouse/api/console/templates/error.html",
    "skillhouse/api/console/static/console.css",
    "skillhouse/examples/hollowbrook_server.py",
)
BOOKING = {"room_id": 2, "guest_name": "Ada Lovelace", "arrival": "2031-06-01", "departure": "2031-06-03"}


@dataclass(frozen=True)
class Installed:
    """A venv outside the checkout with the wheel installed, and the wheel."""

    venv: Path
    wheel: Path

    def command(self, name: str) -> str:
        return str(self.venv / "bin" / name)


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{argv[:4]} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def clean_env(**variables: str) -> dict[str, str]:
    """This environment without the checkout's venv, Python path or skillhouse settings (bar the guest cache)."""
    kept = {k: v for k, v in os.environ.items()
            if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME") and
            (not k.startswith("SKILLHOUSE_") or k == "SKILLHOUSE_GUEST_CACHE")}
    return {**kept, **variables}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    tracked = _run(["git", "ls-files", "-z"], ROOT).split("\0")
    for relative in filter(None, tracked):
        if (ROOT / relative).is_file():  # a file deleted but not yet committed is not part of the tree
            (source / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / relative, source / relative)
    wheels = work / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(wheels), str(source)], work, clean_env())
    (wheel,) = wheels.glob("skillhouse-*.whl")
    venv = work / "venv"
    # pip from this run's environment installs into the new venv (``--python``): the venv needs no pip of its
    # own, and modules are compiled when first imported rather than all of them at install (most of the time)
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], work, clean_env())
    _run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-compile", str(wheel)],
         work, clean_env())
    return Installed(venv, wheel)


def test_the_wheel_carries_the_wit_world_the_guest_sources_migrations_and_console_files(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())

    assert [name for name in PACKAGE_DATA if name not in names] == []
    assert not any(name.startswith(("tests/", "examples/", "wit/")) for name in names)


def test_the_installed_package_is_the_wheels_not_the_checkouts(installed: Installed, tmp_path: Path) -> None:
    where = _run([installed.command("python"), "-c", "import skillhouse; print(skillhouse.__file__)"], tmp_path,
                 clean_env()).strip()

    assert Path(where).is_relative_to(installed.venv)


def test_the_installed_script_imports_a_spec_then_lists_its_tools(installed: Installed, tmp_path: Path) -> None:
    # the fast entry, ending its process without the interpreter's teardown (skillhouse.cli.fast.leave)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(openapi({"/items/{id}": {"get": {"operationId": "getItem", "parameters": [
        {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]}}})))  # fmt: skip
    env = clean_env(SKILLHOUSE_DATA_DIR=str(tmp_path / "data"))
    script = installed.command("skillhouse")
    _run([script, "import-openapi", str(spec), "--out", str(tmp_path / "out")], tmp_path, env)
    (skill,) = (tmp_path / "out").iterdir()
    listed = json.loads(_run([script, "tools", str(skill)], tmp_path, env))

    assert "from skillhouse.cli import console" in Path(script).read_text()
    assert [tool["name"] for tool in listed] == [f"{skill.name}_getItem"]


@pytest.fixture
def house(installed: Installed, tmp_path: Path) -> Iterator[str]:
    """The installed ``skillhouse hollowbrook-server`` on a free loopback port; its base URL."""
    port = free_port()
    proc = subprocess.Popen([installed.command("skillhouse"), "hollowbrook-server", "--port", str(port)], cwd=tmp_path,
                            env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _answers(f"{url}/rooms"), proc, 60)
        yield url
    finally:
        proc.terminate()
        proc.wait(15)


def _answers(url: str, headers: dict[str, str] | None = None) -> httpx.Response | None:
    try:
        return httpx.get(url, headers=headers, timeout=5)
    except httpx.TransportError:
        return None


def wait_for(check: Callable[[], object], proc: subprocess.Popen[bytes], seconds: float) -> None:
    """Until ``check()`` is truthy; fails when ``proc`` exits or ``seconds`` pass (a bound, not an assertion on time)."""
    pause = threading.Event()
    for _ in range(int(seconds / 0.2)):
        assert proc.poll() is None, f"{proc.args!r} exited with {proc.returncode}"
        if check():
            return
        pause.wait(0.2)
    raise AssertionError(f"{proc.args!r}: not there after {seconds} s")


def test_installed_serve_publishes_the_example_and_books_a_room_through_the_wasm_guest(
    installed: Installed, house: str, tmp_path: Path
) -> None:
    port = free_port()
    env = clean_env(SKILLHOUSE_DATA_DIR=str(tmp_path / "data"), SKILLHOUSE_SECRET_KEY=Fernet.generate_key().decode(),
                    SKILLHOUSE_RESOLVE=f"hollowbrook.local:8084=127.0.0.1:{house.rsplit(':', 1)[1]}")
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        serve = subprocess.Popen([installed.command("skillhouse"), "serve", "--port", str(port)], cwd=tmp_path, env=env,
                                 stdout=sink, stderr=subprocess.STDOUT)
    api = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _answers(f"{api}/openapi.json"), serve, 120)
        token = _run([installed.command("skillhouse"), "tokens", "create", "--tenant", "acme", "--scope", "admin"], tmp_path, env).strip()
        auth = {"Authorization": f"Bearer {token}"}

        def guest_settled() -> bool:
            answer = _answers(f"{api}/v1/guest", auth)
            return answer is not None and answer.json()["state"] in ("ready", "failed")

        wait_for(guest_settled, serve, 900)  # minutes only when the guest's sources changed since the last build
        guest = httpx.get(f"{api}/v1/guest", headers=auth).json()
        published = _run([installed.command("skillhouse"), "publish", str(HOLLOWBROOK), "--server", api], tmp_path,
                         {**env, "SKILLHOUSE_TOKEN": token})
        with httpx.Client(base_url=api, headers=auth, timeout=120) as client:
            turn = client.post("/v1/turns", json={"skills": [{"name": "hollowbrook", "version": "1.0.0"}]})
            assert turn.status_code == 201, turn.text
            call = client.post(f"/v1/turns/{turn.json()['id']}/calls",
                               json={"tool": "hollowbrook_create_booking", "arguments": BOOKING})
        bookings = httpx.get(f"{house}/bookings").json()
    finally:
        serve.terminate()
        serve.wait(15)
    said = log.read_text()

    assert (guest["kind"], guest["state"]) == ("wasm", "ready"), guest
    assert published.startswith("published hollowbrook 1.0.0 sha256:")
    assert call.status_code == 200, call.text
    assert call.json()["status"] == 201, call.json()
    assert [(b["guest_name"], b["room_id"]) for b in bookings["bookings"]] == [("Ada Lovelace", 2)]
    assert "guest:       WebAssembly component" in said and "Traceback" not in said
