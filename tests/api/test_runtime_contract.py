"""The source contract under /api/runtime: field rules, states, publish, releases, manifest resolution."""

from __future__ import annotations

import hashlib
from typing import Any

import rfc8785
from fastapi.testclient import TestClient
from tests.api.specs_examples import comms_tool_spec, skill_spec, tool_spec

from skillhouse.compiler import compile_package
from skillhouse.skill import read_package

Headers = dict[str, str]
TOOLS = "/api/runtime/skills/tool-specs"
SKILLS = "/api/runtime/skills/skill-specs"
EXECUTE = "/api/runtime/tools/execute"


def _problems(response: Any) -> dict[str, str]:
    return {p["path"]: p["code"] for p in response.json()["error"]["problems"]}


def _publish(client: TestClient, headers: Headers, skill_id: str = "github-coding-custom", version: int = 1) -> Any:
    return client.post(f"{SKILLS}/{skill_id}/{version}/publish", headers=headers)


def test_the_documented_payloads_are_accepted_and_published(client: TestClient, acme: Headers) -> None:
    assert client.post(TOOLS, json=tool_spec(), headers=acme).status_code == 201
    assert client.post(SKILLS, json=skill_spec(), headers=acme).status_code == 201
    published = _publish(client, acme)
    assert published.status_code == 201
    release = client.get("/api/runtime/skills/releases/github-coding-custom/1", headers=acme).json()
    assert release["bundle_hash"] == published.json()["bundle_hash"]
    assert set(release["bundle"]) == {"SKILL.md", "tools.md"}


def test_an_invalid_tool_spec_reports_every_problem_with_its_path(client: TestClient, acme: Headers) -> None:
    body = tool_spec(tool_id="GitHub Custom", version="1", tool_pack="coding.v2", name=" ")
    del body["tool_spec"]["description"]
    response = client.post(TOOLS, json=body, headers=acme)
    assert response.status_code == 422
    assert set(_problems(response)) >= {"tool_spec.tool_id", "tool_spec.version", "tool_spec.tool_pack",
                                         "tool_spec.name", "tool_spec.description"}


def test_versions_are_positive_json_integers(client: TestClient, acme: Headers) -> None:
    for version in (0, -1, 1.5, True, "1", 2**31):
        response = client.post(TOOLS, json=tool_spec(version=version), headers=acme)
        assert response.status_code == 422, version
        assert "tool_spec.version" in _problems(response)


def test_a_manifest_must_follow_its_pack(client: TestClient, acme: Headers) -> None:
    body = tool_spec()
    body["tool_spec"]["integration_manifest"].update(provider="gitlab", capabilities=["send_email", "get_issue", "get_issue"])
    response = client.post(TOOLS, json=body, headers=acme)
    assert response.status_code == 422
    paths = set(_problems(response))
    assert any(p.endswith("provider") for p in paths) and any(".capabilities" in p for p in paths)


def test_a_manifest_of_another_pack_than_its_spec_is_refused(client: TestClient, acme: Headers) -> None:
    body = comms_tool_spec()
    body["tool_spec"]["tool_pack"] = "coding.v1"
    response = client.post(TOOLS, json=body, headers=acme)
    assert response.status_code == 422
    assert _problems(response) == {"tool_spec.integration_manifest.tool_pack": "tool-pack-mismatch"}


def test_unknown_fields_are_refused(client: TestClient, acme: Headers) -> None:
    response = client.post(TOOLS, json=tool_spec(colour="blue"), headers=acme)
    assert response.status_code == 422 and "tool_spec.colour" in _problems(response)


def test_tool_spec_states_only_move_forward_and_published_content_is_frozen(client: TestClient, acme: Headers) -> None:
    assert client.post(TOOLS, json=tool_spec(state="published"), headers=acme).status_code == 201
    assert client.post(TOOLS, json=tool_spec(state="validated"), headers=acme).json()["error"]["code"] == "invalid-transition"
    changed = client.post(TOOLS, json=tool_spec(state="published", name="Renamed"), headers=acme)
    assert changed.status_code == 409 and changed.json()["error"]["code"] == "release-conflict"
    assert client.post(TOOLS, json=tool_spec(state="published"), headers=acme).status_code == 200
    assert client.post(TOOLS, json=tool_spec(state="deprecated"), headers=acme).status_code == 200
    assert client.post(TOOLS, json=tool_spec("github.other", state="deprecated"), headers=acme).status_code == 422


def test_a_skill_spec_is_published_only_from_validated(client: TestClient, acme: Headers) -> None:
    client.post(TOOLS, json=tool_spec(), headers=acme)
    client.post(SKILLS, json=skill_spec(state="draft"), headers=acme)
    assert _publish(client, acme).json()["error"]["code"] == "invalid-transition"
    direct = client.post(SKILLS, json=skill_spec(state="published"), headers=acme)
    assert _problems(direct) == {"state": "publish-through-route"}
    assert _publish(client, acme, "nothing-here").status_code == 404


def test_publishing_again_answers_the_same_release_and_changed_content_is_refused(client: TestClient, acme: Headers) -> None:
    client.post(TOOLS, json=tool_spec(), headers=acme)
    client.post(SKILLS, json=skill_spec(), headers=acme)
    first = _publish(client, acme)
    again = _publish(client, acme)
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json() == again.json()
    changed = client.post(SKILLS, json=skill_spec(description="Something else"), headers=acme)
    assert changed.status_code == 409 and changed.json()["error"]["code"] == "release-conflict"
    same = client.post(SKILLS, json=skill_spec(state="published"), headers=acme)
    assert same.status_code == 200 and same.json()["state"] == "published"
    assert client.post(SKILLS, json=skill_spec(state="deprecated"), headers=acme).json()["state"] == "deprecated"


def test_a_validated_skill_needs_usable_tools(client: TestClient, acme: Headers) -> None:
    client.post(TOOLS, json=tool_spec("github.draft", state="draft"), headers=acme)
    tools = [{"tool_id": "github.missing", "version": 1}, {"tool_id": "github.draft", "version": 1},
             {"tool_id": "github.primary", "version": 1}, {"tool_id": "github.primary", "version": 1}]
    duplicated = client.post(SKILLS, json=skill_spec(tools=tools), headers=acme)
    assert _problems(duplicated) == {"skill_spec.allowed_tools.3": "duplicate-tool"}
    response = client.post(SKILLS, json=skill_spec(tools=tools[:3]), headers=acme)
    assert _problems(response) == {"skill_spec.allowed_tools.0": "unknown-tool", "skill_spec.allowed_tools.1": "unknown-tool"}
    draft = client.post(SKILLS, json=skill_spec(tools=tools[:3], state="draft"), headers=acme)
    assert draft.status_code == 201 and draft.json()["report"]["ok"] is False


def test_the_bundle_is_a_valid_agent_skill_and_its_hash_is_canonical(client: TestClient, acme: Headers) -> None:
    client.post(TOOLS, json=tool_spec(), headers=acme)
    client.post(SKILLS, json=skill_spec(description="Quotes: 'single' and \"double\": colons\n---\nname: evil"), headers=acme)
    release = _publish(client, acme).json()
    package, errors = read_package("github-coding-custom", release["bundle"])
    compiled, compile_errors = compile_package(package, "1")
    assert errors == [] and compile_errors == [] and compiled is not None
    assert package.manifest is not None and package.manifest.name == "github-coding-custom"
    document = {k: v for k, v in release["document"].items() if k != "digest"}
    assert release["bundle_hash"] == "sha256:" + hashlib.sha256(rfc8785.dumps(document)).hexdigest()
    assert release["compatibility"] == compiled.document["compatibility"]


def test_builtins_are_listed_and_a_tenant_row_shadows_them_for_that_tenant_only(
    client: TestClient, acme: Headers, globex: Headers
) -> None:
    listed = {r["tool_spec"]["tool_id"]: r["source"] for r in client.get(TOOLS, headers=acme).json()["data"]}
    assert listed == {"github.primary": "builtin", "resend.primary": "builtin"}
    assert {r["skill_spec"]["skill_id"] for r in client.get(SKILLS, headers=acme).json()["data"]} == {"github-coding", "resend-comms"}
    client.post(TOOLS, json=tool_spec("github.primary", version=2), headers=acme)
    mine = [(r["tool_spec"]["tool_id"], r["source"]) for r in client.get(TOOLS, headers=acme).json()["data"]]
    theirs = [(r["tool_spec"]["tool_id"], r["source"]) for r in client.get(TOOLS, headers=globex).json()["data"]]
    assert ("github.primary", "tenant") in mine and ("github.primary", "builtin") not in mine
    assert ("github.primary", "builtin") in theirs
    shadowed = client.post(EXECUTE, json={"tool_pack": "coding.v1", "operation": "list_issues",
                                          "manifest_ref": {"tool_id": "github.primary"}}, headers=acme)
    assert _problems(shadowed) == {"operation": "unknown-capability"}
    builtin = client.post(EXECUTE, json={"tool_pack": "coding.v1", "operation": "list_issues",
                                         "manifest_ref": {"tool_id": "github.primary"}}, headers=globex)
    assert builtin.status_code == 200 and builtin.json()["resolved"]["source"] == "builtin"


def test_a_builtin_skill_release_is_readable_by_every_tenant(client: TestClient, acme: Headers) -> None:
    release = client.get("/api/runtime/skills/releases/resend-comms/1", headers=acme)
    assert release.status_code == 200 and release.json()["source"] == "builtin"
    assert _publish(client, acme, "resend-comms").json()["bundle_hash"] == release.json()["bundle_hash"]


def test_resolution_by_tool_id_picks_the_highest_usable_version(client: TestClient, acme: Headers) -> None:
    client.post(TOOLS, json=tool_spec(version=1), headers=acme)
    client.post(TOOLS, json=tool_spec(version=2, state="draft"), headers=acme)
    body = {"tool_pack": "coding.v1", "operation": "get_issue", "manifest_ref": {"tool_id": "github.custom"}}
    response = client.post(EXECUTE, json=body, headers=acme)
    assert response.status_code == 200 and (response.json()["resolved"]["tool_id"], response.json()["resolved"]["version"]) \
        == ("github.custom", 1)
    pinned = client.post(EXECUTE, json={**body, "manifest_ref": {"tool_id": "github.custom", "version": 2}}, headers=acme)
    assert _problems(pinned) == {"manifest_ref.tool_id": "unknown-tool"}


def test_comms_resolves_by_integration_id_and_the_pack_must_match(client: TestClient, acme: Headers) -> None:
    body = {"tool_pack": "comms.v1", "operation": "send_email", "manifest_ref": {"integration_id": "resend.primary"}}
    assert client.post(EXECUTE, json=body, headers=acme).json()["resolved"]["manifest"]["integration_id"] == "resend.primary"
    client.post(TOOLS, json=comms_tool_spec(), headers=acme)
    mine = client.post(EXECUTE, json={**body, "manifest_ref": {"integration_id": "resend.custom"}}, headers=acme)
    assert mine.status_code == 200 and mine.json()["resolved"]["manifest"]["integration_id"] == "resend.custom"
    mismatch = client.post(EXECUTE, json={**body, "tool_pack": "coding.v1"}, headers=acme)
    assert _problems(mismatch) == {"manifest_ref": "tool-pack-mismatch"}


def test_an_explicit_manifest_wins_over_a_reference(client: TestClient, acme: Headers) -> None:
    manifest = comms_tool_spec("resend.inline")["tool_spec"]["integration_manifest"]
    body = {"tool_pack": "comms.v1", "operation": "send_email", "manifest": manifest,
            "manifest_ref": {"tool_id": "github.primary"}}
    response = client.post(EXECUTE, json=body, headers=acme)
    assert response.status_code == 200 and response.json()["resolved"]["source"] == "inline"
    assert response.json()["resolved"]["manifest"]["integration_id"] == "resend.inline"
    # no arguments: the guest refuses the call before anything is sent
    assert response.json()["result"]["error"]["code"] == "invalid-arguments"
    wrong = client.post(EXECUTE, json={**body, "tool_pack": "coding.v1", "operation": "get_issue"}, headers=acme)
    assert _problems(wrong)["manifest.tool_pack"] == "tool-pack-mismatch"


def test_a_call_without_a_manifest_or_with_an_ambiguous_reference_is_refused(client: TestClient, acme: Headers) -> None:
    bare = client.post(EXECUTE, json={"tool_pack": "comms.v1", "operation": "send_email"}, headers=acme)
    assert _problems(bare) == {"manifest_ref": "manifest-required"}
    both = client.post(EXECUTE, json={"tool_pack": "comms.v1", "operation": "send_email",
                                      "manifest_ref": {"tool_id": "resend.primary", "integration_id": "resend.primary"}},
                       headers=acme)
    assert _problems(both) == {"manifest_ref": "invalid-manifest-ref"}
