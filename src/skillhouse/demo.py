"""``make demo``: the whole shape on the Hollowbrook guesthouse, with real servers on loopback.

It starts the Hollowbrook house and ``skillhouse serve`` (SQLite in ``.data/demo``), creates a tenant
and its token, publishes the skill, binds a turn and lets the model (``SKILLHOUSE_MODEL``; unset, the
demo sets the scripted demo plan, since a deployment has no model by default) list rooms, load
``create_booking`` by its short name, book with one call, resend the booking, and try a charge, which
the gateway holds. A person then approves the charge through the API, and the identical call runs it once. Everything it started is stopped before it exits, unless
``--keep`` (``make demo ARGS=--keep``): then serve and the house keep running, and the demo prints the
console's URL and a fresh token to sign in with and see the approval just made, until Ctrl-C.

The guest is serve's: it builds the WebAssembly component in the background at start-up (minutes the
first time, then cached) and the demo shows its progress through ``GET /v1/guest``. A guest that
cannot be built stops the demo with its error; the in-process guest runs only when asked for
(``SKILLHOUSE_GUEST=inprocess``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
from cryptography.fernet import Fernet
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from skillhouse.errors import RunFailure
from skillhouse.json_types import JsonObject
from skillhouse.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
HOLLOWBROOK = ROOT / "examples" / "hollowbrook"
WORK = ROOT / ".data" / "demo"
# the checkout's own cache unless one is named, so a second demo starts in seconds
GUEST_CACHE = ROOT / ".data" / "guest"
PROMPT = "Book a double room at Hollowbrook for Ada Lovelace from 1 to 3 June 2031, and charge the stay."
console = Console(highlight=False)


class DemoFailed(RunFailure):
    """A step of the demo did not do what it should (``demo-failed``); the message says which."""

    code = "demo-failed"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "skillhouse.cli", *args]


@contextmanager
def _process(name: str, argv: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A child process whose output goes to ``log``; terminated (then killed) on the way out."""
    with log.open("wb") as sink:
        proc = subprocess.Popen(argv, env=env, stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            console.print(f"[dim]stopped {name} (pid {proc.pid})[/dim]")


def _wait_for(url: str, proc: subprocess.Popen[bytes], log: Path, headers: dict[str, str] | None = None) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise DemoFailed(f"{proc.args!r} exited early:\n{log.read_text()[-2000:]}")
        try:
            if httpx.get(url, headers=headers, timeout=2).status_code < 500:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise DemoFailed(f"{url} did not answer within 60 s:\n{log.read_text()[-2000:]}")


def _wait_for_guest(client: httpx.Client, proc: subprocess.Popen[bytes], log: Path) -> str:
    """Until serve's guest is ready, showing its build's progress; a line saying what the guest is."""
    pause = threading.Event()
    with console.status("serve is preparing the guest") as status:
        while True:
            if proc.poll() is not None:
                raise DemoFailed(f"skillhouse serve exited early:\n{log.read_text()[-2000:]}")
            guest = _ok(client.get("/v1/guest"))
            if guest["state"] == "ready":
                break
            if guest["state"] == "failed":
                raise DemoFailed(f"the WebAssembly guest could not be built: {guest['message']}\n"
                                 "(SKILLHOUSE_GUEST=inprocess make demo runs the guest without its sandbox)")
            doing = guest.get("stage") or "reading the guest cache"
            status.update(f"serve is preparing the guest: {doing} ({guest['elapsed_seconds']:.0f} s; "
                          "the first build takes a few minutes, then it is cached)")
            pause.wait(0.5)
    if guest["kind"] == "inprocess":
        return "guest: in process (SKILLHOUSE_GUEST=inprocess: no sandbox)"
    return f"guest: WebAssembly component, ready ({guest['elapsed_seconds']:.1f} s)"


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _result_summary(result: Any) -> str:
    if not isinstance(result, dict):
        return _short(result)
    if "error" in result:
        error = result["error"]
        extra = f" (approval {error['approval_id']})" if error.get("approval_id") else ""
        return f"[yellow]{error.get('code')}[/yellow]{extra}: {_short(error.get('message', ''), 100)}"
    if "status" in result:
        replay = " [cyan]replayed: the stored answer, nothing sent[/cyan]" if result.get("replayed") else ""
        return f"HTTP {result['status']}{replay} {_short(result.get('body', ''), 110)}"
    if "loaded" in result:
        names = [t["name"] if isinstance(t, dict) else str(t) for t in result["loaded"]]
        return f"loaded {', '.join(names)}" + (f"; not: {_short(result.get('not_loaded'), 80)}" if result.get("not_loaded") else "")
    return _short(result)


def print_transcript(transcript: JsonObject) -> None:
    """The agent loop, step by step: what the model said and called, and what each call answered."""
    table = Table(title="The turn", show_lines=True, expand=True)
    table.add_column("#", justify="right", width=3)
    table.add_column("model")
    table.add_column("answer")
    results = {m["tool_call_id"]: m["content"] for m in transcript["messages"] if m.get("role") == "tool"}
    step = 0
    for message in transcript["messages"]:
        if message.get("role") == "user":
            table.add_row("", f"[bold]user[/bold]: {message['content']}", "")
        if message.get("role") != "assistant":
            continue
        step += 1
        said = f"[italic]{message['content']}[/italic]\n" if message.get("content") else ""
        calls = message.get("tool_calls") or []
        if not calls:
            table.add_row(str(step), f"{said}[bold]final answer[/bold]", "")
        for call in calls:
            result = results.get(call["id"])
            decoded = json.loads(result) if isinstance(result, str) and result[:1] in "{[" else result
            table.add_row(str(step), f"{said}{call['name']}({_short(call.get('arguments'), 120)})", _result_summary(decoded))
            said = ""
    console.print(table)
    if transcript.get("final"):
        console.print(Panel(transcript["final"], title="final answer"))


def _calls_of(transcript: JsonObject, tool: str) -> list[tuple[JsonObject, Any]]:
    results = {m["tool_call_id"]: m["content"] for m in transcript["messages"] if m.get("role") == "tool"}
    found = []
    for message in transcript["messages"]:
        for call in message.get("tool_calls") or []:
            if call["name"] == tool:
                content = results.get(call["id"])
                found.append((call["arguments"], json.loads(content) if isinstance(content, str) else content))
    return found


def run_demo(keep: bool = False) -> None:
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    try:
        chosen = Settings.from_env()  # what the person running the demo set; the demo sets the rest
    except ValueError as exc:
        raise DemoFailed(str(exc)) from None
    # a deployment has no model unless one is named; the demo plays its scripted plan unless told otherwise
    model = chosen.model or "scripted"
    guest = chosen.guest
    console.rule("[bold]skillhouse demo: the Hollowbrook guesthouse[/bold]")
    console.print(f"model: {model}    store: SQLite in {WORK.relative_to(ROOT)}")
    house_port, api_port = _free_port(), _free_port()
    env = {
        **os.environ,  # passed through to the demo's processes, which read their settings themselves
        "SKILLHOUSE_DATA_DIR": str(WORK),
        "SKILLHOUSE_DATABASE_URL": f"sqlite:///{WORK / 'skillhouse.db'}",
        "SKILLHOUSE_SECRET_KEY": Fernet.generate_key().decode(),
        "SKILLHOUSE_RESOLVE": f"hollowbrook.local:8084=127.0.0.1:{house_port}",
        "SKILLHOUSE_GUEST": guest,
        "SKILLHOUSE_GUEST_CACHE": str(chosen.guest_cache or GUEST_CACHE),
        "SKILLHOUSE_MODEL": model,
    }
    house = f"http://127.0.0.1:{house_port}"
    api = f"http://127.0.0.1:{api_port}"
    with ExitStack() as stack:
        house_log, api_log = WORK / "hollowbrook.log", WORK / "serve.log"
        house_proc = stack.enter_context(
            _process("the Hollowbrook house", _cli("hollowbrook-server", "--port", str(house_port)), env, house_log)
        )
        _wait_for(f"{house}/rooms", house_proc, house_log)
        console.print(f"started the Hollowbrook house at {house} (skill host hollowbrook.local:8084 maps here)")

        token = subprocess.run(_cli("tokens", "create", "--tenant", "demo", "--scope", "admin", "--label", "make demo"), env=env,
                               capture_output=True, text=True, check=True, cwd=ROOT).stdout.strip()
        console.print(f"$ skillhouse tokens create --tenant demo --scope admin   → {token[:8]}… (shown once, stored hashed)")
        auth = {"Authorization": f"Bearer {token}"}

        api_proc = stack.enter_context(_process("skillhouse serve", _cli("serve", "--port", str(api_port)), env, api_log))
        _wait_for(f"{api}/v1/skills", api_proc, api_log, auth)
        console.print(f"started skillhouse serve at {api} (its log: {api_log.relative_to(ROOT)})")
        client = stack.enter_context(httpx.Client(base_url=api, headers=auth, timeout=120))
        console.print(_wait_for_guest(client, api_proc, api_log))

        published = subprocess.run(_cli("publish", str(HOLLOWBROOK), "--server", api), env={**env, "SKILLHOUSE_TOKEN": token},
                                   capture_output=True, text=True, cwd=ROOT)
        if published.returncode != 0:
            raise DemoFailed(f"publish failed:\n{published.stderr}{published.stdout}")
        console.print(f"$ skillhouse publish examples/hollowbrook   → {published.stdout.strip() or published.stderr.strip()}")

        turn = _ok(client.post("/v1/turns", json={"skills": [{"name": "hollowbrook", "version": "1.0.0"}], "profile": "openai"}))
        console.print(f"bound turn {turn['id']}: {len(turn['tools'])} tools offered in the openai profile\n")

        transcript = _ok(client.post(f"/v1/turns/{turn['id']}/run", json={"prompt": PROMPT}))
        print_transcript(transcript)

        approval_id: str | None = None
        charges = [(args, result) for args, result in _calls_of(transcript, "hollowbrook_charge")
                   if isinstance(result, dict) and result.get("error", {}).get("code") == "approval-required"]
        if charges:
            arguments, held = charges[-1]
            approval_id = held["error"]["approval_id"]
            approval = _ok(client.get(f"/v1/approvals/{approval_id}"))
            request = approval.get("request") or approval.get("canonical") or {}
            console.print(Panel(
                f"{request.get('method', '')} {request.get('url', '')}\n{_short(request.get('body'), 300)}\n"
                f"commitment {approval.get('commitment')}",
                title=f"held for approval: {approval_id}",
            ))
            _ok(client.post(f"/v1/approvals/{approval_id}/approve"))
            console.print(f"a person approves it: POST /v1/approvals/{approval_id}/approve")
            first = _ok(client.post(f"/v1/turns/{turn['id']}/calls", json={"tool": "hollowbrook_charge", "arguments": arguments}))
            console.print(f"the identical charge runs: {_result_summary(first)}")
            again = _ok(client.post(f"/v1/turns/{turn['id']}/calls", json={"tool": "hollowbrook_charge", "arguments": arguments}))
            console.print(f"and once more:             {_result_summary(again)}")

        bookings = httpx.get(f"{house}/bookings").json()
        charged = httpx.get(f"{house}/charges").json()
        bookings = bookings.get("bookings", bookings) if isinstance(bookings, dict) else bookings
        charged = charged.get("charges", charged) if isinstance(charged, dict) else charged
        console.print(f"\nthe house has {len(bookings)} booking(s) and {len(charged)} charge(s)")
        if model.startswith("scripted") and (len(bookings) != 1 or len(charged) != 1):
            raise DemoFailed(f"expected one booking and one charge, the house has {bookings} and {charged}")
        if keep:
            _keep_serving(env, api, api_proc, house_proc, approval_id)
        else:
            console.print("\nto keep going: [bold]make demo ARGS=--keep[/bold] leaves serve running and prints the "
                          "console's URL and a token, to see the approval you just made")
    console.rule("[green]done: one booking despite the resend; the charge ran once, after approval[/green]")


def _keep_serving(env: dict[str, str], api: str, serve: subprocess.Popen[bytes], house: subprocess.Popen[bytes],
                  approval_id: str | None) -> None:
    """Print how to look around, then wait until Ctrl-C (or until serve or the house stops)."""
    token = subprocess.run(_cli("tokens", "create", "--tenant", "demo", "--label", "console"), env=env,
                           capture_output=True, text=True, check=True, cwd=ROOT).stdout.strip()
    page = f"{api}/console/approvals/{approval_id}" if approval_id else f"{api}/console/approvals"
    console.print(Panel(
        f"console:  {api}/console\n"
        f"token:    {token}   (paste it to sign in; tenant demo)\n"
        f"approval: {page}\n"
        f"API:      {api}/docs   (Authorization: Bearer <token>)\n"
        f"serve pid {serve.pid}, the Hollowbrook house pid {house.pid}; press Ctrl-C to stop both",
        title="still serving",
    ))
    sys.stdout.flush()
    try:
        while serve.poll() is None and house.poll() is None:
            threading.Event().wait(1.0)  # a wait Ctrl-C interrupts
    except KeyboardInterrupt:
        console.print("stopping")


def _ok(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        raise DemoFailed(f"{response.request.method} {response.request.url.path} answered {response.status_code}: {response.text[:500]}")
    return response.json()


def _stop_on_signals() -> None:
    """Ctrl-C and ``kill`` (SIGTERM) stop the demo and everything it started. SIGINT is handled even when it
    came in ignored, as a background job of a non-interactive shell inherits it: Ctrl-C is how ``--keep``
    says to stop, and without this such a demo could only be killed, leaving serve and the house running."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, interrupt)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make demo", description="The Hollowbrook guesthouse end to end.")
    parser.add_argument("--keep", action="store_true",
                        help="leave serve running afterwards and print the console's URL and a token (Ctrl-C stops it)")
    options = parser.parse_args(argv)
    _stop_on_signals()
    try:
        run_demo(keep=options.keep)
    except DemoFailed as exc:
        console.print(f"[red]demo failed:[/red] {exc}")
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
