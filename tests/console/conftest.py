"""Console fixtures: one world and one served console per session, one Chromium per session, a fresh
browser context per test (Chromium found by tests/real_parts.py), and screenshots (``SKILLHOUSE_SCREENSHOTS`` picks the folder; ``make
screenshots`` points it at ``docs/screenshots``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from fastapi.testclient import TestClient
from tests.console.world import World, add_busy_tenant, build_world, console_app, serving
from tests.hollowbrook import running_hollowbrook
from tests.real_parts import chromium

from skillhouse.examples.hollowbrook_server import HollowbrookHTTPServer

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

@pytest.fixture(scope="session")
def house() -> Iterator[HollowbrookHTTPServer]:
    with running_hollowbrook() as server:
        yield server


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory, house: HollowbrookHTTPServer) -> Iterator[World]:
    built = build_world(f"sqlite:///{tmp_path_factory.mktemp('console') / 'skillhouse.db'}", house.port)
    yield built
    built.gateway.close()
    built.database.dispose()


@pytest.fixture(scope="session")
def busy(world: World) -> World:
    """The world with a tenant holding more approvals, audit rows and tools than a page shows."""
    add_busy_tenant(world)
    return world


@pytest.fixture(scope="session")
def console_url(world: World) -> Iterator[str]:
    with serving(console_app(world)) as url:
        yield url


@pytest.fixture
def client(world: World) -> TestClient:
    return TestClient(console_app(world), base_url="http://testserver")


# Module scope, not session: Playwright's sync API keeps an event loop running in the main thread
# while it is open, which would break later tests that start their own (anyio.run, asyncio.run).
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = chromium()  # Debian's or Playwright's; skips (fails under CI=true) without one
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(executable))
        yield launched
        launched.close()


DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def page(browser: Browser, console_url: str) -> Iterator[Page]:
    # bypass_csp: the accessibility checks inject axe-core, a script the console's own policy refuses
    context = browser.new_context(base_url=console_url, viewport=DESKTOP, bypass_csp=True)
    context.set_default_timeout(10_000)
    opened = context.new_page()
    yield opened
    context.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chosen = os.environ.get("SKILLHOUSE_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def shoot(screenshots: Path) -> Any:
    """``shoot(page, name)`` saves the whole page as ``<name>.png`` (``full_page=False``: what the window shows)."""

    def save(page: Page, name: str, full_page: bool = True) -> Path:
        target = screenshots / f"{name}.png"
        page.screenshot(path=str(target), full_page=full_page)
        return target

    return save
