"""Every console page in a real browser at a desktop and a phone width: nothing wider than the window,
no serious or critical accessibility violation (axe-core, vendored in tests/data/axe), and the filter
and the pages of lists with more rows than one page shows.

The busy tenant (tests/console/world.py) has 25 waiting approvals, more than 50 audit rows and a release
of 120 tools.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect
from tests.console.conftest import DESKTOP, PHONE
from tests.console.world import BIG_TOOLS, BUSY, World

from skillhouse.gateway import ApprovalStore

AXE = Path(__file__).resolve().parents[1] / "data" / "axe" / "axe.min.js"
WIDTHS = {"desktop": DESKTOP, "phone": PHONE}


def sign_in(page: Page, world: World, tenant: str, start: str) -> None:
    page.goto(start)
    page.get_by_label("API token").fill(world.tokens[tenant])
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(re.escape(start) + "$"))


def overflow(page: Page) -> dict[str, int]:
    return dict(page.evaluate("() => ({scroll: document.documentElement.scrollWidth, inner: window.innerWidth})"))


def serious_violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's violations of impact serious or critical on the page as it stands."""
    page.add_script_tag(path=str(AXE))
    found: list[dict[str, Any]] = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
             .filter(v => v.impact === 'serious' || v.impact === 'critical')
             .map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"""
    )
    return found


def busy_pages(world: World) -> list[str]:
    store = ApprovalStore(world.database)
    waiting = store.list(BUSY, "pending", limit=500)
    decided = next((a for a in store.list(BUSY, limit=500) if a.state == "denied"), None)
    if decided is None:
        decided = store.decide(BUSY, waiting[-1].id, False, "console, token #0 (checks)", note="Not this one.")
    return [
        "/console/approvals",
        "/console/approvals?show=decided",
        f"/console/approvals/{waiting[0].id}",
        f"/console/approvals/{decided.id}",
        "/console/skills",
        "/console/skills?q=nothing-like-this",
        "/console/skills/hollowbrook",
        "/console/skills/github-coding",
        "/console/skills/warehouse/1.0.0",
        "/console/skills/warehouse/1.0.0?q=shipment",
        "/console/skills/hollowbrook/1.0.0/tools/hollowbrook_charge?profile=openai-strict",
        "/console/skills/hollowbrook/diff?old=1.0.0&new=1.1.0",
        "/console/audit",
        "/console/audit?decision=denied",
        "/console/audit?turn=no-such-turn",
        "/console/audit?since=yesterday",
        "/console/credentials",
        "/console/no-such-page",
    ]


@pytest.fixture
def sized(browser: Browser, console_url: str, request: pytest.FixtureRequest) -> Any:
    contexts = []

    def open_page(width: str) -> Page:
        context = browser.new_context(base_url=console_url, viewport=WIDTHS[width], bypass_csp=True)
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_fits_the_window_and_has_no_serious_accessibility_violation(sized: Any, busy: World, width: str,
                                                                              shoot: Any) -> None:
    page: Page = sized(width)
    page.goto("/console/approvals")
    problems: dict[str, Any] = {}
    checked = ["/console/sign-in"]
    for path in ["sign-in", *busy_pages(busy)]:
        if path == "sign-in":
            found = (overflow(page), serious_violations(page))
            sign_in(page, busy, BUSY, "/console/approvals")
        else:
            page.goto(path)
            checked.append(path)
            if path == "/console/credentials":  # every bind form shown, as when one comes back refused
                page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
                expect(page.get_by_role("button", name="Revoke the connection of ada@busy.example")).to_be_visible()
            found = (overflow(page), serious_violations(page))
        size, violations = found
        if size["scroll"] > size["inner"] or violations:
            problems[path] = {"width": size, "violations": violations}
    assert problems == {}, problems
    assert len(checked) == 19
    if width == "phone":
        for path, name, first in (("/console/approvals", "approvals-phone", "h1"), ("/console/audit", "audit-phone", ".pager"),
                                  ("/console/skills/warehouse/1.0.0?q=shipment", "tools-phone", ".pager")):
            page.goto(path)
            page.locator(first).first.evaluate("element => element.scrollIntoView()")  # its top at the window's top
            shoot(page, name, full_page=False)


def test_the_filter_narrows_a_large_release_and_its_tools_come_a_page_at_a_time(sized: Any, busy: World) -> None:
    page: Page = sized("desktop")
    sign_in(page, busy, BUSY, "/console/skills/warehouse/1.0.0")
    pager = page.get_by_role("navigation", name="Tools pages (top)")
    expect(pager).to_contain_text(f"Showing 50 of {BIG_TOOLS} tools")
    first = page.locator("#tools tbody tr").first.locator("th a").first.inner_text()

    pager.get_by_role("link", name="Next").click()
    expect(pager).to_contain_text(f"Showing 50 of {BIG_TOOLS} tools")
    assert page.locator("#tools tbody tr").first.locator("th a").first.inner_text() > first
    pager.get_by_role("link", name="Next").click()
    expect(pager).to_contain_text(f"Showing {BIG_TOOLS - 100} of {BIG_TOOLS} tools")
    expect(pager.locator(".off")).to_have_text("Next →")
    pager.get_by_role("link", name="Previous").click()
    pager.get_by_role("link", name="Previous").click()
    assert page.locator("#tools tbody tr").first.locator("th a").first.inner_text() == first

    page.get_by_label("Tool name or description").fill("shipment")
    page.get_by_role("button", name="Filter").click()
    expect(pager).to_contain_text(f"Showing 30 of 30 matching tools (of {BIG_TOOLS})")
    names = page.locator("#tools tbody th a:first-child").all_inner_texts()
    assert len(names) == 30 and all("shipment" in name for name in names)

    page.get_by_label("Tool name or description").fill("record 117 history")  # words of the description
    page.get_by_role("button", name="Filter").click()
    assert page.locator("#tools tbody th a:first-child").all_inner_texts() == ["warehouse_get_invoice_117"]


def test_approvals_and_the_audit_come_a_page_at_a_time_with_counts(sized: Any, busy: World) -> None:
    page: Page = sized("phone")
    sign_in(page, busy, BUSY, "/console/approvals")
    waiting = ApprovalStore(busy.database).list(BUSY, "pending", limit=500)
    pager = page.get_by_role("navigation", name="Waiting approvals pages (top)")
    expect(pager).to_contain_text(f"Showing 20 of {len(waiting)} waiting approvals")
    expect(page.get_by_role("link", name=re.compile(r"Waiting for a decision"))).to_contain_text(str(len(waiting)))
    shown = {link.get_attribute("href") for link in page.locator("article h2 a").all()}
    pager.get_by_role("link", name="Older").click()
    expect(pager).to_contain_text(f"Showing {len(waiting) - 20} of {len(waiting)} waiting approvals")
    rest = {link.get_attribute("href") for link in page.locator("article h2 a").all()}
    assert shown.isdisjoint(rest) and len(shown | rest) == len(waiting)
    pager.get_by_role("link", name="Newer").click()
    assert {link.get_attribute("href") for link in page.locator("article h2 a").all()} == shown

    page.goto("/console/audit?turn=turn-busy")
    pager = page.get_by_role("navigation", name="Audit pages (top)")
    total = int(re.search(r"of (\d+) rows", pager.inner_text()).group(1))  # type: ignore[union-attr]
    assert total >= 65
    expect(pager).to_contain_text(f"Showing 50 of {total} rows")
    pager.get_by_role("link", name="Older").click()
    expect(pager).to_contain_text(f"Showing {min(50, total - 50)} of {total} rows")
    page.get_by_label("Decision").select_option("refused")
    page.get_by_role("button", name="Filter").click()
    expect(pager).to_contain_text("Showing 40 of 40 rows")
    assert set(page.locator("#audit .decision").all_inner_texts()) == {"refused"}
    page.get_by_label("Until (UTC)").fill("2001-01-01T00:00")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator(".empty")).to_contain_text("No rows match this filter")


def test_a_person_can_decide_with_the_keyboard_alone_and_sees_where_the_focus_is(sized: Any, busy: World) -> None:
    page: Page = sized("phone")
    sign_in(page, busy, BUSY, "/console/approvals")
    approval = ApprovalStore(busy.database).list(BUSY, "pending", limit=1)[0]
    page.goto(f"/console/approvals/{approval.id}")
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    reason = page.get_by_label("Reason for denying")
    for _ in range(30):  # the header's links, the facts' links, Approve, then the reason
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.id") == reason.get_attribute("id"):
            break
    expect(reason).to_be_focused()
    assert page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle") == "solid"
    assert float(page.evaluate("() => parseFloat(getComputedStyle(document.activeElement).outlineWidth)")) >= 2
    page.keyboard.type("Typed at the keyboard.")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Deny")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("status").filter(has_text="Denied.")).to_be_visible()
    expect(page.locator("#decision-note")).to_have_text("Typed at the keyboard.")
