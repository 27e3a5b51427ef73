"""``skillhouse tools`` reads the release ``import-openapi`` compiled instead of compiling the skill again,
and never a stale one: an edited package is compiled afresh."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import PackageFactory
from tests.corpus import corpus_spec
from typer.testing import CliRunner

from skillhouse.cli import app
from skillhouse.compiler import compile_dir
from skillhouse.release_cache import cached_listing, cached_release, package_key, remember_release
from skillhouse.settings import Settings


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("SKILLHOUSE_RELEASE_CACHE", str(directory))
    return directory


def cached(skill: Path) -> dict[str, object] | None:
    """What the CLI's release cache (as this process's settings name it) holds for ``skill``."""
    return cached_release(Settings.from_env().release_cache, skill)


def tools(skill: Path, *options: str) -> str:
    result = CliRunner().invoke(app, ["tools", str(skill), *options])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_tools_after_an_import_reads_the_imported_release_and_prints_what_a_compile_prints(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    imported = CliRunner().invoke(app, ["import-openapi", str(corpus_spec("petstore-v3.yaml")), "--out", str(tmp_path / "out")])
    assert imported.exit_code == 0, imported.output
    skill = next((tmp_path / "out").iterdir())
    assert cached(skill) is not None  # written by the import
    from_cache = tools(skill), tools(skill, "--provider", "openai")
    monkeypatch.setenv("SKILLHOUSE_RELEASE_CACHE", "off")
    assert cached(skill) is None
    assert (tools(skill), tools(skill, "--provider", "openai")) == from_cache


def test_an_edited_package_is_compiled_again_not_read_from_the_cache(cache: Path, make_package: PackageFactory) -> None:
    skill = make_package({"get_item.md": "---\noperation:\n  method: GET\n  url: https://api.test/items/{id}\n---\nGet an item.\n"},
                         name="shop")
    before = package_key(skill)
    assert [t["name"] for t in json.loads(tools(skill))] == ["shop_get_item"]
    assert cached(skill) is not None  # a compile fills the cache too
    (skill / "get_item.md").write_text((skill / "get_item.md").read_text().replace("Get an item.", "Fetch one item."))
    assert package_key(skill) != before and cached(skill) is None
    assert cached_listing(Settings.from_env().release_cache, skill) is None  # nor its listing
    assert "Fetch one item." in json.loads(tools(skill))[0]["description"]


def test_a_damaged_cache_entry_is_a_miss(cache: Path, make_package: PackageFactory) -> None:
    skill = make_package({"ping.md": "---\noperation:\n  method: GET\n  url: https://api.test/ping\n---\nPing.\n"}, name="pinger")
    first = tools(skill)
    key = package_key(skill)
    kept = (cache / f"{key}.marshal").read_bytes()
    for damaged in (b"{not marshal data", kept[: len(kept) // 2]):  # another format; a write cut short
        (cache / f"{key}.marshal").write_bytes(damaged)
        (cache / f"{key}.tools.json").write_bytes(b"\xff not UTF-8")
        assert cached(skill) is None and cached_listing(cache, skill) is None
        assert tools(skill) == first


def test_a_kept_release_reads_back_as_the_compiled_document_in_its_key_order(cache: Path, tmp_path: Path) -> None:
    spec = corpus_spec("readme-3.0-parameters-style.json")
    imported = CliRunner().invoke(app, ["import-openapi", str(spec), "--out", str(tmp_path / "out")])
    assert imported.exit_code == 0, imported.output
    skill = next((tmp_path / "out").iterdir())
    compiled = compile_dir(skill)[0]
    assert compiled is not None
    kept = cached(skill)
    assert kept == compiled.document
    # equal dicts may list their keys in another order; the JSON text a command prints from them may not
    assert json.dumps(kept, ensure_ascii=False) == json.dumps(compiled.document, ensure_ascii=False)


def test_tools_prints_the_listing_the_import_kept_without_decoding_the_release(cache: Path, tmp_path: Path) -> None:
    imported = CliRunner().invoke(app, ["import-openapi", str(corpus_spec("petstore-v3.yaml")), "--out", str(tmp_path / "out")])
    assert imported.exit_code == 0, imported.output
    skill = next((tmp_path / "out").iterdir())
    key = package_key(skill)
    kept = (cache / f"{key}.tools.json").read_text(encoding="utf-8")
    (cache / f"{key}.marshal").write_bytes(b"{not marshal data")  # the release is not read for the neutral listing
    assert tools(skill) == kept + "\n"
    (cache / f"{key}.marshal").unlink()
    (cache / f"{key}.tools.json").unlink()
    assert tools(skill) == kept + "\n"  # compiled afresh: the same text
    assert cached_listing(cache, skill) == kept  # and kept again


def test_a_malformed_setting_stops_tools_with_one_line_naming_it(
    cache: Path, make_package: PackageFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    skill = make_package({"ping.md": "---\noperation:\n  method: GET\n  url: https://api.test/ping\n---\nPing.\n"}, name="pinger")
    monkeypatch.setenv("SKILLHOUSE_KEY_TTL_SECONDS", "a day")
    result = CliRunner().invoke(app, ["tools", str(skill)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: invalid-settings: SKILLHOUSE_KEY_TTL_SECONDS must be a number of seconds, not 'a day'"]


def test_a_release_too_deeply_nested_to_keep_is_left_out_not_raised(tmp_path: Path, make_package: PackageFactory) -> None:
    skill = make_package({"ping.md": "---\noperation:\n  method: GET\n  url: https://api.test/ping\n---\nPing.\n"}, name="pinger")
    nested: dict[str, object] = {}
    for _ in range(5000):  # past marshal's nesting limit
        nested = {"inner": nested}
    remember_release(tmp_path / "cache", skill, {"operations": [], "nested": nested})
    assert cached_release(tmp_path / "cache", skill) is None


def test_a_write_clears_releases_an_earlier_version_kept_as_json_and_keeps_listings(
    tmp_path: Path, make_package: PackageFactory
) -> None:
    skill = make_package({"ping.md": "---\noperation:\n  method: GET\n  url: https://api.test/ping\n---\nPing.\n"}, name="pinger")
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "0123abcd.json").write_text('{"operations": []}')  # no version reads these any more
    (cache / "0123abcd.tools.json").write_text("[]")  # a listing: still read when its key matches
    compiled = compile_dir(skill)[0]
    assert compiled is not None
    remember_release(cache, skill, compiled.document)
    assert sorted(p.name for p in cache.iterdir()) == sorted(["0123abcd.tools.json", f"{package_key(skill)}.marshal"])


def test_the_compiler_fingerprint_changes_with_any_source_edited_added_or_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import shutil

    import skillhouse
    from skillhouse import release_cache

    package = Path(skillhouse.__file__).parent
    base = tmp_path / "skillhouse"
    for folder in ("compiler", "skill"):
        shutil.copytree(package / folder, base / folder, ignore=shutil.ignore_patterns("__pycache__"))
    seen = {release_cache._fingerprint_sources(str(base))}
    assert release_cache._fingerprint_sources(str(base)) in seen  # the same sources: the same fingerprint

    def changed() -> bool:
        fingerprint = release_cache._fingerprint_sources(str(base))
        new = fingerprint not in seen
        seen.add(fingerprint)
        return new

    source = base / "compiler" / "__init__.py"
    facts = source.stat()
    source.write_bytes(source.read_bytes().replace(b"\n", b"\r", 1))  # an edit of the same size
    os.utime(source, ns=(facts.st_atime_ns, facts.st_mtime_ns + 1))  # a nanosecond later
    assert changed()
    source.write_bytes(source.read_bytes() + b"\n")
    os.utime(source, ns=(facts.st_atime_ns, facts.st_mtime_ns + 1))  # a byte more, at the same time
    assert changed()
    (base / "skill" / "extra.py").write_text("X = 1\n")
    assert changed()
    (base / "skill" / "extra.py").unlink()
    assert not changed()  # back to the sources of the step before
    (base / "compiler" / "nested").mkdir()
    (base / "compiler" / "nested" / "deep.py").write_text("X = 1\n")
    assert changed()
    (base / "compiler" / "notes.txt").write_text("not a source")
    assert not changed()
    monkeypatch.setattr(skillhouse, "__version__", "9.9.9")
    assert changed()
