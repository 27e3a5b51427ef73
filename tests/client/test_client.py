"""The typed client against a real API on loopback with the Hollowbrook house behind it: publish, bind, list
tools, book with one call, a charge held for approval surfacing as ``ApprovalRequired``, approved through
the client, then the identical call going through once; the error answers as the error tree's classes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.client.served import HOLLOWBROOK, Served

from skillhouse.client import (
    ApprovalRequired,
    Client,
    Conflict,
    InvalidArguments,
    NotFound,
    RequestRefused,
    ScopeRefused,
    TokenRefused,
    model_answer,
    offered_tools,
)
from skillhouse.errors import CallerError, ConflictError, Forbidden, NotFoundError, Signal, Unauthenticated
from skillhouse.wire.skills import Profile, ReleaseOut
from skillhouse.wire.turns import TurnOut

BOOKING = {"room_id": 2, "guest_name": "Ada Lovelace", "arrival": "2031-06-01", "departure": "2031-06-03"}


@pytest.fixture
def turn(admin: Client, release: ReleaseOut) -> TurnOut:
    return admin.bind([f"{release.skill}@{release.version}"])


def test_publishing_answers_the_release_and_publishing_it_again_answers_the_same_one(
    admin: Client, release: ReleaseOut
) -> None:
    assert (release.skill, release.version) == ("hollowbrook", "1.0.0")
    assert release.digest.startswith("sha256:")
    assert admin.publish(HOLLOWBROOK).digest == release.digest
    files = {p.name: p.read_text(encoding="utf-8") for p in HOLLOWBROOK.iterdir() if p.is_file()}
    assert admin.publish("hollowbrook", "1.0.0", files=files).digest == release.digest
    assert admin.release("hollowbrook", "1.0.0").document.operations[0].tool_name.startswith("hollowbrook_")


def test_a_bound_turn_lists_its_tools_in_the_profile_asked_for(admin: Client, release: ReleaseOut) -> None:
    turn = admin.bind([("hollowbrook", "1.0.0")], profile="anthropic")
    assert turn.profile == "anthropic" and turn.releases[0].digest == release.digest
    tools = admin.tools(turn.id)
    assert {"hollowbrook_create_booking", "hollowbrook_charge"} <= {tool["name"] for tool in tools}
    assert all("input_schema" in tool for tool in tools)
    assert {t["name"] for t in admin.release_tools("hollowbrook", "1.0.0", "anthropic")} >= {"hollowbrook_charge"}


def test_one_call_books_a_room_a_charge_waits_for_approval_and_the_identical_call_then_goes_through(
    served: Served, admin: Client, turn: TurnOut
) -> None:
    charges_before = len(served.house.house.charges())
    booked = admin.call(turn.id, "hollowbrook_create_booking", BOOKING)
    assert booked.status == 201 and booked.body is not None
    booking = json.loads(booked.body)
    charge = {"booking_id": booking["booking_id"], "amount_cents": booking["total_cents"], "description": "Two nights"}

    with pytest.raises(ApprovalRequired) as held:
        admin.call(turn.id, "hollowbrook_charge", charge)
    assert isinstance(held.value, Signal) and not isinstance(held.value, CallerError)
    assert held.value.code == "approval-required" and held.value.approval_id.startswith("apr_")
    assert len(served.house.house.charges()) == charges_before
    pending = admin.approvals(state="pending")
    assert held.value.approval_id in [a.id for a in pending]

    with Client(served.url, served.tokens["approve"]) as approver:
        decided = approver.approve(held.value.approval_id)
    assert decided.state == "approved"

    charged = admin.call(turn.id, "hollowbrook_charge", charge)
    assert charged.status == 201 and len(served.house.house.charges()) == charges_before + 1
    assert admin.approval(held.value.approval_id).state == "used"


def test_a_call_that_is_not_checked_answers_what_the_model_would_see(admin: Client, turn: TurnOut) -> None:
    answer = admin.call(turn.id, "hollowbrook_create_booking", {"room_id": "two"}, check=False)
    assert answer.status is None and answer.error is not None and answer.error.code == "invalid-arguments"


def test_error_answers_are_the_error_trees_classes_by_their_code(served: Served, admin: Client, turn: TurnOut) -> None:
    with Client(served.url, "skh_not-a-token") as stranger, pytest.raises(TokenRefused) as unknown:
        stranger.approvals()
    assert isinstance(unknown.value, Unauthenticated) and unknown.value.status == 401
    with Client(served.url, served.tokens["run"]) as runner, pytest.raises(ScopeRefused) as scope:
        runner.credentials()
    assert isinstance(scope.value, Forbidden) and scope.value.code == "insufficient-scope"
    with pytest.raises(NotFound) as missing:
        admin.release("hollowbrook", "9.9.9")
    assert isinstance(missing.value, NotFoundError)
    with pytest.raises(RequestRefused) as refused:
        admin.bind(["hollowbrook@9.9.9"])
    assert refused.value.status == 422 and [(p.path, p.code) for p in refused.value.problems] == [
        ("skills.0", "unknown-release")]
    with pytest.raises(InvalidArguments) as invalid:
        admin.call(turn.id, "hollowbrook_create_booking", {"room_id": "two"})
    assert invalid.value.status is None and invalid.value.violations


def test_a_decided_approval_cannot_be_decided_again(served: Served, admin: Client, turn: TurnOut) -> None:
    booking = json.loads(admin.call(turn.id, "hollowbrook_create_booking", {**BOOKING, "room_id": 3}).body or "{}")
    charge = {"booking_id": booking["booking_id"], "amount_cents": 100, "description": "Deposit"}
    with pytest.raises(ApprovalRequired) as held:
        admin.call(turn.id, "hollowbrook_charge", charge)
    assert admin.deny(held.value.approval_id, "not agreed").note == "not agreed"
    with pytest.raises(Conflict) as twice:
        admin.approve(held.value.approval_id)
    assert isinstance(twice.value, ConflictError) and twice.value.code == "approval-not-pending"
    with pytest.raises(RequestRefused) as denied:
        admin.call(turn.id, "hollowbrook_charge", charge)
    assert denied.value.code == "approval-denied"


def test_credentials_are_bound_listed_without_their_value_and_deleted(admin: Client) -> None:
    bound = admin.bind_credential("https://api.example.com", "s3cret-value", header="X-Api-Key", scheme="header")
    assert (bound.origin, bound.header, bound.scheme) == ("https://api.example.com", "x-api-key", "header")
    listed = admin.credentials()
    assert [b.origin for b in listed] == ["https://api.example.com"] and "s3cret-value" not in str(listed)
    admin.delete_credential("https://api.example.com", "X-Api-Key")
    assert admin.credentials() == []
    with pytest.raises(NotFound) as gone:
        admin.delete_credential("https://api.example.com", "X-Api-Key")
    assert gone.value.code == "credential-not-found"


def test_a_turn_runs_with_the_deployments_model(served: Served, admin: Client, turn: TurnOut) -> None:
    transcript = admin.run(turn.id, "Book a double room.")
    assert transcript.stopped == "answer" and transcript.final
    assert any(m["role"] == "tool" for m in transcript.messages)


def test_a_package_directory_needs_a_version(tmp_path: Path, admin: Client) -> None:
    (tmp_path / "SKILL.md").write_text("---\nname: nothing\ndescription: Nothing.\n---\nNothing.\n")
    with pytest.raises(RequestRefused) as refused:
        admin.publish(tmp_path)
    assert refused.value.code == "invalid-skill"


@pytest.mark.parametrize("profile", ["openai", "openai-strict", "anthropic", "gemini", "bedrock", "mcp"])
def test_a_turns_tools_in_any_profile_are_offered_as_name_description_and_schema(admin: Client, release: ReleaseOut,
                                                                                   profile: Profile) -> None:
    offered = offered_tools(admin.bind(["hollowbrook@1.0.0"], profile=profile).tools)
    names = {tool.name for tool in offered}
    assert {op.tool_name for op in release.document.operations} <= names
    charge = next(tool for tool in offered if tool.name == "hollowbrook_charge")
    assert charge.description.startswith("Charge a booking") and charge.parameters["type"] == "object"
    assert {"booking_id", "amount_cents"} <= set(charge.parameters["properties"])


def test_a_held_call_is_an_answer_for_the_model_not_an_exception(served: Served, admin: Client, turn: TurnOut) -> None:
    booked = admin.call(turn.id, "hollowbrook_create_booking", {**BOOKING, "room_id": 1, "arrival": "2031-08-01",
                                                                 "departure": "2031-08-02"}, check=False)
    booking = model_answer(booked)
    assert booking["status"] == 201 and booking["body"]["booking_id"].startswith("bk_") and "date" not in booking["headers"]
    charge = {"booking_id": booking["body"]["booking_id"], "amount_cents": 1, "description": "Deposit"}
    held = model_answer(admin.call(turn.id, "hollowbrook_charge", charge, check=False))
    assert held["error"]["code"] == "approval-required" and held["error"]["approval_id"].startswith("apr_")
