"""Fixtures for the guest: compiled packages, and a guest over a recording host, once per runner.

``GUEST_RUNNERS`` lists the runner kinds every guest behaviour test runs against; adding ``"wasm"``
once :func:`skillhouse.host.make_runner` knows it runs the whole suite against the component too.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.gateway.wire import json_upstream

from skillhouse.compiler import compile_dir
from skillhouse.host import GuestRunner, TurnHost, make_runner

GUEST_RUNNERS = ["inprocess", "wasm"]
ROOT = Path(__file__).resolve().parents[2]
HOLLOWBROOK = ROOT / "examples" / "hollowbrook"


def compile_release(path: Path) -> dict[str, Any]:
    compiled, errors = compile_dir(path)
    assert compiled is not None, [str(e) for e in errors]
    return compiled.document


def write_package(root: Path, name: str, files: dict[str, str], description: str = "A test skill.") -> Path:
    """A skill package ``name`` under ``root`` with a SKILL.md and ``files`` (dedented)."""
    directory = root / name
    directory.mkdir(parents=True)
    (directory / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\nUse {name}.\n")
    for file_name, text in files.items():
        (directory / file_name).write_text(textwrap.dedent(text).lstrip())
    return directory


def operation_of(release: dict[str, Any], name: str) -> dict[str, Any]:
    return next(op for op in release["operations"] if op["name"] == name)


@pytest.fixture(scope="session")
def hollowbrook() -> dict[str, Any]:
    return compile_release(HOLLOWBROOK)


@pytest.fixture
def package(tmp_path: Path) -> Callable[..., dict[str, Any]]:
    """Write and compile a package: ``package("name", {"file.md": text})`` gives its release."""

    def build(name: str, files: dict[str, str], description: str = "A test skill.") -> dict[str, Any]:
        return compile_release(write_package(tmp_path, name, files, description))

    return build


def echo_upstream(request: dict[str, Any]) -> dict[str, Any]:
    """A fake upstream that answers 200 with the request it got."""
    return {"status": 200, "headers": {"content-type": "application/json"}, "body": json.dumps(request)}


@dataclass
class GuestUnderTest:
    runner: GuestRunner
    host: TurnHost

    def call(self, name: str, arguments: Any) -> Any:
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return json.loads(self.runner.call_tool(name, text))

    def tools(self) -> dict[str, Any]:
        answer: dict[str, Any] = json.loads(self.runner.list_tools())
        return answer


@pytest.fixture(params=GUEST_RUNNERS)
def guest_of(request: pytest.FixtureRequest) -> Callable[..., GuestUnderTest]:
    """``guest_of(releases, fetch=..., complete=..., objects=...)``: a guest over a recording host."""
    kind = request.param

    def build(
        releases: Iterable[dict[str, Any]],
        fetch: Callable[[dict[str, Any]], dict[str, Any]] = echo_upstream,
        complete: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        objects: dict[str, str] | None = None,
    ) -> GuestUnderTest:
        host = TurnHost(list(releases), json_upstream(fetch), complete, objects)
        return GuestUnderTest(make_runner(host, kind), host)

    return build
