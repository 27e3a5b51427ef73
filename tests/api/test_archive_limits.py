"""Archive uploads are bounded while they are read: a ~200 KB tar.gz that would unpack to hundreds of
megabytes is refused with a located code, without holding it in memory, and nothing is stored."""

from __future__ import annotations

import io
import tarfile
import tracemalloc

import pytest
from fastapi.testclient import TestClient

from skillhouse.registry.bundle import MAX_FILE_BYTES, files_from_archive
from skillhouse.registry.errors import Invalid

Headers = dict[str, str]
BASE = "/v1/skills/hollowbrook/versions/1.0.0"
MB = 1024 * 1024


class Repeated(io.RawIOBase):
    """``size`` bytes of one repeated byte, made as they are read (the bomb is never built in memory)."""

    def __init__(self, size: int, byte: bytes = b"a") -> None:
        self.left, self.block = size, byte * 65536

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        count = min(len(buffer), self.left, len(self.block))
        buffer[:count] = self.block[:count]
        self.left -= count
        return count


def bomb(files: int, size: int) -> bytes:
    """A tar.gz of ``files`` text files of ``size`` repeated bytes each, compressed as hard as gzip can."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=9) as archive:
        skill = b"---\nname: hollowbrook\ndescription: A bomb.\n---\nBody.\n"
        info = tarfile.TarInfo("hollowbrook/SKILL.md")
        info.size = len(skill)
        archive.addfile(info, io.BytesIO(skill))
        for index in range(files):
            info = tarfile.TarInfo(f"hollowbrook/notes_{index}.md")
            info.size = size
            archive.addfile(info, Repeated(size))
    return buffer.getvalue()


@pytest.fixture(scope="module")
def many_files_bomb() -> bytes:
    return bomb(200, MB - 1)  # each file under the old per-file cap: 200 MB of text, all kept before


def upload(client: TestClient, headers: Headers, data: bytes) -> dict[str, object]:
    response = client.put(f"{BASE}/archive", content=data, headers={**headers, "Content-Type": "application/gzip"})
    assert response.status_code == 422, response.text
    body: dict[str, object] = response.json()["error"]
    return body


def test_a_200_kb_archive_of_200_mb_is_refused_before_it_is_held_or_stored(
    client: TestClient, acme: Headers, many_files_bomb: bytes
) -> None:
    assert len(many_files_bomb) < 400 * 1024
    error = upload(client, acme, many_files_bomb)
    assert error["code"] == "archive-too-large"
    assert error["problems"] == [{"path": "body", "code": "archive-too-large", "message": error["problems"][0]["message"]}]  # type: ignore[index]
    assert client.get(BASE, headers=acme).status_code == 404


def test_unpacking_a_bomb_keeps_memory_to_the_cap(many_files_bomb: bytes) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(Invalid) as refused:
            files_from_archive(many_files_bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert refused.value.code == "archive-too-large"
    assert peak < 40 * MB, f"peak {peak} bytes unpacking a bomb"


def test_one_member_declaring_64_mb_is_refused_at_its_header(client: TestClient, acme: Headers) -> None:
    error = upload(client, acme, bomb(1, 64 * MB))
    assert error["code"] == "file-too-large"
    assert error["problems"][0]["path"] == "files.hollowbrook/notes_0.md"  # type: ignore[index]
    assert client.get(BASE, headers=acme).status_code == 404


def test_an_archive_of_too_many_entries_is_refused(client: TestClient, acme: Headers) -> None:
    assert upload(client, acme, bomb(2500, 0))["code"] == "too-many-files"


def test_a_file_just_under_the_cap_is_still_accepted(client: TestClient, acme: Headers) -> None:
    data = bomb(1, MAX_FILE_BYTES)
    response = client.put(f"{BASE}/archive", content=data, headers={**acme, "Content-Type": "application/gzip"})
    assert response.status_code == 200, response.text
    stored = client.get(BASE, headers=acme).json()
    assert sorted(stored["files"]) == ["SKILL.md", "notes_0.md"]
    assert stored["files"]["notes_0.md"] == "a" * MAX_FILE_BYTES  # kept whole, not cut at the cap


def test_a_json_upload_is_capped_on_its_total_size(client: TestClient, acme: Headers) -> None:
    files = {"SKILL.md": "---\nname: hollowbrook\ndescription: Big.\n---\n", **{f"n{i}.md": "a" * (MB - 1) for i in range(9)}}
    response = client.put(BASE, json={"files": files}, headers=acme)
    assert response.status_code == 422
    assert {p["code"] for p in response.json()["error"]["problems"]} == {"package-too-large"}
