"""The console in a real browser (Chromium through Playwright) against a served app and the real gateway.

Held charges are made the way an agent makes them: a turn's guest calls ``hollowbrook_charge``, the
gateway holds it; after a person decides in the console (seeing a confirmation, then who decided and
when, and the decision's own row in the audit trail), the turn calls again.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
from playwright.sync_api import Page, expect
from tests.console.world import RIVAL, TENANT, World

from skillhouse.examples.hollowbrook_server import HollowbrookHTTPServer


def sign_in(page: Page, world: World, tenant: str = TENANT, start: str = "/console/approvals") -> None:
    page.goto(start)
    expect(page).to_have_url(re.compile(r"/console/sign-in\?next="))
    page.get_by_label("API token").fill(world.tokens[tenant])
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(re.escape(start) + "$"))


def held(answer: dict[str, Any]) -> str:
    assert answer["error"]["code"] == "approval-required", answer
    return str(answer["error"]["approval_id"])


def charges_of(house: HollowbrookHTTPServer, booking_id: str) -> list[dict[str, Any]]:
    charges = httpx.get(f"{house.url}/charges").json()
    listed = charges if isinstance(charges, list) else charges.get("charges", [])
    return [c for c in listed if c["booking_id"] == booking_id]


def test_a_person_approves_a_held_charge_and_the_call_completes(page: Page, world: World, house: HollowbrookHTTPServer,
                                                               shoot: Any) -> None:
    turn = world.turn(TENANT, "turn-approve")
    booking = turn.book("Ada Lovelace", "2031-03-01", "2031-03-03")
    approval_id = held(turn.charge(booking, 16000, "Two nights in the double room"))

    page.goto("/console/approvals")
    shoot(page, "sign-in")
    sign_in(page, world)
    card = page.locator("article", has=page.locator(f"a[href='/console/approvals/{approval_id}']"))
    # what a person decides on comes first: the operation's summary, the key arguments, who asked
    expect(card.get_by_role("heading")).to_contain_text("Charge a booking's card an amount in euro cents.")
    expect(card.get_by_label("Key arguments")).to_contain_text("amount_cents16000")
    expect(card.get_by_label("Key arguments")).to_contain_text(f"booking_id{booking}")
    expect(card).to_contain_text("turn turn-approve, skill hollowbrook 1.0.0")
    expect(card).to_contain_text("Valid until")
    # then the exact request, one click away
    request = card.locator("details", has_text="The exact request")
    expect(request.locator(".request")).to_be_hidden()
    request.locator("summary").click()
    expect(request).to_contain_text("POST")
    expect(request).to_contain_text("http://hollowbrook.local:8084/charges")
    expect(request).to_contain_text('"amount_cents":16000')  # the body exactly as it is sent
    expect(request).to_contain_text("sha256:")
    assert world.tokens[TENANT] not in page.content()
    shoot(page, "approvals")

    card.get_by_role("button", name="Approve").click()
    expect(page).to_have_url(re.compile(f"/console/approvals/{approval_id}\\?decided=approved$"))
    expect(page.get_by_role("status").filter(has_text="Approved.")).to_be_visible()
    expect(page.locator("#approval-state")).to_have_text("approved")
    expect(page.locator("#decision")).to_contain_text("console, token #")
    expect(page.locator("#decision")).to_contain_text("(acme console)")
    expect(page.locator("#decision")).to_contain_text("UTC")

    completed = turn.charge(booking, 16000, "Two nights in the double room")
    assert completed["status"] == 201, completed
    assert len(charges_of(house, booking)) == 1

    page.goto(f"/console/approvals/{approval_id}")
    expect(page.locator("#approval-state")).to_have_text("used")
    expect(page.get_by_role("status").filter(has_text="Approved.")).to_have_count(0)  # the confirmation came once
    person = page.locator("#runs tr.person")
    expect(person).to_contain_text("approved")
    expect(person).to_contain_text("(acme console)")
    expect(page.locator("#runs")).to_contain_text("allowed")
    expect(page.locator("#runs")).to_contain_text("201")
    shoot(page, "approval")


def test_a_person_denies_a_held_charge_and_it_is_never_sent(page: Page, world: World, house: HollowbrookHTTPServer,
                                                           shoot: Any) -> None:
    turn = world.turn(TENANT, "turn-deny")
    booking = turn.book("Grace Hopper", "2031-04-10", "2031-04-12", room_id=1)
    approval_id = held(turn.charge(booking, 99000, "Minibar, apparently"))

    sign_in(page, world)
    card = page.locator("article", has=page.locator(f"a[href='/console/approvals/{approval_id}']"))
    card.get_by_label("Reason for denying").fill("The minibar was never opened; check with the guest.")
    card.get_by_role("button", name="Deny").click()
    expect(page.get_by_role("status").filter(has_text="Denied.")).to_be_visible()
    expect(page.locator("#approval-state")).to_have_text("denied")
    expect(page.locator("#decision")).to_contain_text("(acme console)")
    expect(page.locator("#decision-note")).to_have_text("The minibar was never opened; check with the guest.")
    expect(page.locator("#runs")).to_contain_text("held")
    expect(page.locator("#runs tr.person")).to_contain_text("denied")
    expect(page.locator("#runs")).not_to_contain_text("allowed")
    assert charges_of(house, booking) == []

    page.goto("/console/audit?turn=turn-deny")
    audit = page.locator("#audit")
    expect(audit).to_contain_text("held")
    expect(audit).to_contain_text("approval-required")
    expect(audit.locator("tr.person")).to_have_count(1)  # the person's decision, beside the gateway's row
    expect(audit.locator("tr.person")).to_contain_text("denied")
    expect(audit.locator("tr.person")).to_contain_text("by console, token #")
    expect(audit).not_to_contain_text("turn-approve")
    shoot(page, "audit")

    # the turn asking again is not the denied request run: nothing reaches the house, and the model is told why
    retried = turn.charge(booking, 99000, "Minibar, apparently")
    assert retried["error"]["code"] == "approval-denied", retried
    assert "The minibar was never opened" in retried["error"]["message"]
    assert charges_of(house, booking) == []


def test_a_tool_schema_is_shown_for_two_providers_and_versions_are_compared(page: Page, world: World, shoot: Any) -> None:
    sign_in(page, world, start="/console/skills")
    expect(page.locator("tr", has_text="github-coding")).to_contain_text("Comes with skillhouse")
    page.get_by_label("Name or description").fill("hollow")
    page.get_by_role("button", name="Filter").click()
    expect(page.get_by_role("status")).to_contain_text("1 of 3 skill(s) match")
    shoot(page, "skills")
    page.get_by_role("link", name="hollowbrook", exact=True).click()
    expect(page.locator("table").last).to_contain_text("sha256:")
    shoot(page, "skill")

    page.get_by_role("link", name="1.0.0", exact=True).first.click()
    shoot(page, "version")
    page.get_by_role("link", name="hollowbrook_create_booking for openai-strict: adapted").click()
    expect(page.locator("#profile-name")).to_have_text("openai-strict")
    strict = json.loads(page.locator("#wire-schema").inner_text())
    assert strict["function"]["strict"] is True
    assert strict["function"]["parameters"]["properties"]["note"]["type"] == ["string", "null"]
    shoot(page, "tool-openai-strict")

    page.get_by_role("navigation", name="Provider profiles").get_by_role("link", name="gemini").click()
    expect(page.locator("#profile-name")).to_have_text("gemini")
    gemini = json.loads(page.locator("#wire-schema").inner_text())
    assert "additionalProperties" not in gemini["parameters"]
    expect(page.locator(".changes")).to_contain_text("/parameters/additionalProperties")
    shoot(page, "tool-gemini")

    page.goto("/console/skills/hollowbrook")
    page.get_by_label("From").select_option("1.0.0")
    page.get_by_label("to").select_option("1.1.0")
    page.get_by_role("button", name="Compare tools").click()
    expect(page.locator(".tools.removed")).to_contain_text("hollowbrook_cancel_booking")
    charge = page.locator("article", has_text="hollowbrook_charge")
    expect(charge).to_contain_text("/schema/properties/currency")
    expect(charge).to_contain_text("description")
    shoot(page, "diff")


def test_another_tenants_rows_answer_not_found(page: Page, world: World, shoot: Any) -> None:
    rival_turn = world.turn(RIVAL, "turn-rival")
    booking = rival_turn.book("Rival Guest", "2031-05-01", "2031-05-02", room_id=3)
    rival_approval = held(rival_turn.charge(booking, 5000, "Rival charge"))

    sign_in(page, world)
    for path in (f"/console/approvals/{rival_approval}", "/console/skills/rival-secrets",
                 "/console/skills/rival-secrets/0.1.0"):
        response = page.goto(path)
        assert response is not None and response.status == 404, path
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    shoot(page, "not-found")
    page.goto("/console/approvals")
    assert rival_approval not in page.content()
    page.goto("/console/audit")
    expect(page.locator("#audit")).not_to_contain_text("turn-rival")
