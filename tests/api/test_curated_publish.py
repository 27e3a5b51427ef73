"""Publishing an imported skill with a ``curation.yaml``: refused while the overlay is stale, accepted once applied."""

from __future__ import annotations

from fastapi.testclient import TestClient
from tests.api.conftest import Headers
from tests.openapi.specs import openapi

from skillhouse.openapi import CurationRun, import_openapi, spec_from_data
from skillhouse.skill.curation import read_curation

BASE = "/v1/skills/shop/versions/1.0.0"
SPEC = openapi({"/pets": {"get": {"operationId": "listPets", "summary": "List pets"}},
                "/pets/{id}": {"delete": {"operationId": "deletePet", "summary": "Delete a pet"}}})  # fmt: skip


def curated_files(overlay: str) -> dict[str, str]:
    """The package an import of SPEC with ``overlay`` writes, with the overlay beside it (as `publish` uploads it)."""
    curation = CurationRun.of(*read_curation("curation.yaml", overlay))
    result = import_openapi(spec_from_data(SPEC), name="shop", curation=curation)
    return {**result.files, "curation.yaml": overlay}


def test_a_stale_overlay_is_refused_at_validate_and_publish(client: TestClient, acme: Headers) -> None:
    files = curated_files("operations:\n  listPets:\n    name: pets\n  removedLongAgo:\n    hide: true\n")
    stored = client.put(BASE, json={"files": files}, headers=acme)
    assert stored.status_code == 200, stored.text
    assert stored.json()["report"]["ok"] is False
    refused = client.post(f"{BASE}/validate", headers=acme)
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["code"] == "check-failed"
    assert [(p["file"], p["line"], p["code"]) for p in error["problems"]] == [("curation.yaml", 4, "stale-curation")]
    assert client.post(f"{BASE}/publish", headers=acme).status_code == 409


def test_an_overlay_edited_after_the_import_is_refused(client: TestClient, acme: Headers) -> None:
    files = curated_files("operations:\n  listPets:\n    name: pets\n")
    files["curation.yaml"] = "operations:\n  listPets:\n    name: all_pets\n"
    assert client.put(BASE, json={"files": files}, headers=acme).status_code == 200
    refused = client.post(f"{BASE}/validate", headers=acme)
    assert refused.status_code == 422
    assert [(p["line"], p["code"]) for p in refused.json()["error"]["problems"]] == [(1, "stale-curation")]


def test_an_applied_overlay_publishes_its_curated_tools(client: TestClient, acme: Headers) -> None:
    files = curated_files("operations:\n  listPets:\n    name: pets\n  deletePet:\n    consequential: true\n")
    assert client.put(BASE, json={"files": files}, headers=acme).status_code == 200
    assert client.post(f"{BASE}/validate", headers=acme).status_code == 200
    published = client.post(f"{BASE}/publish", headers=acme)
    assert published.status_code == 201, published.text
    ops = {op["name"]: op for op in published.json()["document"]["operations"]}
    assert sorted(ops) == ["deletePet", "pets"]
    assert ops["pets"]["tool_name"] == "shop_pets"
    assert ops["deletePet"]["approval"] == {"matches": "DELETE /v1/pets/{id}"}
