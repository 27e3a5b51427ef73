"""The native /v1 skill routes: uploads, the state machine, publish, releases, tools and compatibility."""

from __future__ import annotations

import io
import tarfile

from fastapi.testclient import TestClient

Headers = dict[str, str]
BASE = "/v1/skills/hollowbrook/versions/1.0.0"


def _tar_gz(files: dict[str, str], top: str = "hollowbrook") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in files.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_a_tar_gz_upload_and_a_json_upload_store_the_same_content(client: TestClient, acme: Headers,
                                                                   hollowbrook_files: dict[str, str]) -> None:
    archived = client.put(f"{BASE}/archive", content=_tar_gz(hollowbrook_files),
                          headers={**acme, "Content-Type": "application/gzip"})
    assert archived.status_code == 200 and archived.json()["report"] == {"ok": True, "errors": []}
    mapped = client.put(BASE, json={"files": hollowbrook_files}, headers=acme)
    assert mapped.json()["content_digest"] == archived.json()["content_digest"]


def test_an_unreadable_archive_is_a_clear_422(client: TestClient, acme: Headers) -> None:
    response = client.put(f"{BASE}/archive", content=b"not a tarball", headers={**acme, "Content-Type": "application/gzip"})
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid-archive"


def test_a_broken_package_is_stored_as_a_draft_with_located_errors_and_cannot_be_validated(
    client: TestClient, acme: Headers, hollowbrook_files: dict[str, str]
) -> None:
    broken = dict(hollowbrook_files, **{"list_rooms.md": "---\noperation:\n  method: GET\n  url: http://h.test/rooms\n  body: [x]\n---\nList.\n"})
    draft = client.put(BASE, json={"files": broken}, headers=acme).json()
    assert draft["state"] == "draft" and draft["report"]["ok"] is False
    assert {(e["file"], e["code"]) for e in draft["report"]["errors"]} == {("list_rooms.md", "body-on-get")}
    refused = client.post(f"{BASE}/validate", headers=acme)
    assert refused.status_code == 422 and refused.json()["error"]["problems"][0]["line"] == 5


def test_states_move_only_forward_one_step_at_a_time(client: TestClient, acme: Headers, hollowbrook_files: dict[str, str]) -> None:
    client.put(BASE, json={"files": hollowbrook_files}, headers=acme)
    assert client.post(f"{BASE}/deprecate", headers=acme).json()["error"]["code"] == "invalid-transition"
    assert client.post(f"{BASE}/publish", headers=acme).json()["error"]["code"] == "invalid-transition"
    assert client.post(f"{BASE}/validate", headers=acme).json()["state"] == "validated"
    assert client.post(f"{BASE}/publish", headers=acme).status_code == 201
    assert client.post(f"{BASE}/validate", headers=acme).json()["error"]["code"] == "invalid-transition"
    assert client.post(f"{BASE}/deprecate", headers=acme).json()["state"] == "deprecated"
    assert client.get("/v1/skills/hollowbrook/releases/1.0.0", headers=acme).status_code == 200


def test_a_published_version_answers_the_same_release_and_refuses_other_content(
    client: TestClient, acme: Headers, hollowbrook_files: dict[str, str]
) -> None:
    client.put(BASE, json={"files": hollowbrook_files}, headers=acme)
    client.post(f"{BASE}/validate", headers=acme)
    first = client.post(f"{BASE}/publish", headers=acme).json()
    again = client.post(f"{BASE}/publish", headers=acme)
    assert again.status_code == 200 and again.json() == first
    assert client.put(BASE, json={"files": hollowbrook_files}, headers=acme).json()["state"] == "published"
    changed = dict(hollowbrook_files, **{"SKILL.md": hollowbrook_files["SKILL.md"] + "\nChanged.\n"})
    assert client.put(BASE, json={"files": changed}, headers=acme).status_code == 409


def test_a_release_serves_its_tools_per_profile_and_its_compatibility_report(
    client: TestClient, acme: Headers, hollowbrook_files: dict[str, str]
) -> None:
    client.put(BASE, json={"files": hollowbrook_files}, headers=acme)
    client.post(f"{BASE}/validate", headers=acme)
    release = client.post(f"{BASE}/publish", headers=acme).json()
    neutral = client.get("/v1/skills/hollowbrook/releases/1.0.0/tools", headers=acme).json()["tools"]
    assert {t["name"] for t in neutral} == {op["tool_name"] for op in release["document"]["operations"]}
    anthropic = client.get("/v1/skills/hollowbrook/releases/1.0.0/tools?profile=anthropic", headers=acme).json()
    assert {t["name"] for t in anthropic["tools"]} == {t["name"] for t in neutral}
    assert client.get("/v1/skills/hollowbrook/releases/1.0.0/tools?profile=nope", headers=acme).status_code == 422
    report = client.get("/v1/skills/hollowbrook/releases/1.0.0/compatibility", headers=acme).json()
    assert report["digest"] == release["digest"] and set(report["report"]["profiles"]) >= {"openai", "gemini", "mcp"}


def test_paths_that_escape_the_package_are_refused_with_their_path(client: TestClient, acme: Headers) -> None:
    response = client.put(BASE, json={"files": {"../SKILL.md": "x", "/etc/passwd": "y"}}, headers=acme)
    assert response.status_code == 422
    assert {p["path"] for p in response.json()["error"]["problems"]} == {"files.../SKILL.md", "files./etc/passwd"}
