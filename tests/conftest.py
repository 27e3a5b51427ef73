"""Fixtures shared by every test area."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

# PostgreSQL, the browser and the wasm guest: found or started, and reported on the run's last line
pytest_plugins = ["tests.real_parts"]

ROOT = Path(__file__).resolve().parents[1]
HOLLOWBROOK = ROOT / "examples" / "hollowbrook"
# The built guest component is cached in the repo's ignored .data/, so only the first run builds it.
os.environ.setdefault("SKILLHOUSE_GUEST_CACHE", str(ROOT / ".data" / "guest"))
# The CLI's release cache too, never the user's ~/.cache.
os.environ.setdefault("SKILLHOUSE_RELEASE_CACHE", str(ROOT / ".data" / "releases"))

SKILL_MD = """\
---
name: {name}
description: A test skill.
---
Use the tools.
"""

PackageFactory = Callable[..., Path]


def pytest_configure(config: pytest.Config) -> None:
    # ``-k fuzz`` selects by marker too, so ``make fuzz`` runs these along with the tests named for it
    config.addinivalue_line(
        "markers", "fuzz: a property the default run checks on a sample or with few examples; "
        "`make fuzz` (SKILLHOUSE_FUZZ=long) checks it in full",
    )


@pytest.fixture
def make_package(tmp_path: Path) -> PackageFactory:
    """Write a skill package into ``tmp_path/<name>`` from file names to (dedented) texts.

    SKILL.md is added unless given; pass ``None`` as a text to leave a file out.
    """

    def make(files: dict[str, str | bytes | None], name: str = "shop") -> Path:
        root = tmp_path / name
        root.mkdir(parents=True, exist_ok=True)
        merged: dict[str, str | bytes | None] = {"SKILL.md": SKILL_MD.format(name=name), **files}
        for filename, text in merged.items():
            if text is None:
                continue
            target = root / filename
            if isinstance(text, bytes):
                target.write_bytes(text)
            else:
                target.write_text(textwrap.dedent(text), encoding="utf-8")
        return root

    return make


@pytest.fixture(scope="session")
def warm_guest_cache() -> Path:
    """The guest component built (or found) in the suite's cache, for tests that expect a warm start."""
    from skillhouse.host.wasm_build import default_cache_dir, ensure_component

    return ensure_component(cache_dir=default_cache_dir()).wasm
