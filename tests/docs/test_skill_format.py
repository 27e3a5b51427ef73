"""docs/skill-format.md against the compiler: every key the compiler accepts is in the page's tables and
every key in the tables is accepted, in the form the page says; every example on the page compiles."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from tests.docs.pages import blocks, first_column, page, sections

from skillhouse.compiler import compile_package
from skillhouse.compiler.model import ENCODINGS, QUERY_STYLES
from skillhouse.compiler.operation import FILE_KEYS, FLAT_KEYS, SCHEMA_KEYS
from skillhouse.guest import build_request
from skillhouse.skill import read_package
from skillhouse.skill.package import MANIFEST_KEYS

FORMAT = page("skill-format.md")
TOP = sections(FORMAT, 2)
OPERATION_KEYS = sections(FORMAT, 3)["The `operation` keys"]
MINIMAL_SKILL = "---\nname: {name}\ndescription: Examples from the skill format page.\n---\nUse the tools.\n"


def table_rows(text: str) -> dict[str, list[str]]:
    """First-column key to the row's other cells, for the first table in ``text``."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `"):
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def compile_errors(files: dict[str, str], name: str = "shop") -> list[str]:
    files = {"SKILL.md": MINIMAL_SKILL.format(name=name), **files}
    package, read_errors = read_package(name, files)
    _, errors = compile_package(package)
    return [f"{e.code}: {e.message}" for e in sorted(set(read_errors) | set(errors))]


def test_the_skill_md_table_lists_exactly_the_manifest_keys() -> None:
    assert set(first_column(TOP["SKILL.md"])) == set(MANIFEST_KEYS)


def test_the_operation_file_table_lists_exactly_the_top_level_keys() -> None:
    table = TOP["Operation files"].split("###")[0]
    assert set(first_column(table)) == set(FILE_KEYS)


def test_the_operation_table_lists_every_key_in_the_form_that_accepts_it() -> None:
    rows = table_rows(OPERATION_KEYS.split("####")[0])
    forms = {key: cells[0] for key, cells in rows.items()}
    expected = {key: "both" if key in FLAT_KEYS and key in SCHEMA_KEYS else "flat" if key in FLAT_KEYS else "schema"
                for key in FLAT_KEYS | SCHEMA_KEYS}
    assert forms == expected


# method and url are in every operation, and `schema` is what makes the schema form
@pytest.mark.parametrize("key", sorted((FLAT_KEYS | SCHEMA_KEYS) - {"method", "url", "schema"}))
def test_a_key_of_the_table_is_refused_only_in_the_other_form(key: str) -> None:
    form = table_rows(OPERATION_KEYS.split("####")[0])[key][0]
    flat = f"---\noperation:\n  method: POST\n  url: https://api.example.com/x\n  {key}: null\n---\n"
    schema = (f"---\noperation:\n  method: POST\n  url: https://api.example.com/x\n  {key}: null\n"
              '  schema: {"type": "object", "properties": {}, "additionalProperties": false}\n---\n')
    unknown = f"unknown operation key {key!r}"
    flat_problems = [e for e in compile_errors({"x.md": flat}) if unknown in e or "flat-list key" in e]
    schema_problems = [e for e in compile_errors({"x.md": schema}) if repr(key) in e and "key" in e]
    assert (not flat_problems) == (form in ("both", "flat"))
    assert (not schema_problems) == (form in ("both", "schema"))


def test_the_encoding_and_style_tables_list_exactly_what_the_compiler_takes() -> None:
    assert set(first_column(sections(OPERATION_KEYS, 4)["`encoding`"])) == set(ENCODINGS)
    assert set(first_column(sections(OPERATION_KEYS, 4)["`style`"])) == set(QUERY_STYLES)


def test_the_approval_table_lists_exactly_the_keys_the_compiler_allows() -> None:
    documented = first_column(TOP["Operation files"].split("### `approval`")[1])
    gate = "---\napproval:\n  matches: POST /refunds\n  {key}: x\n---\n"
    for key in documented:
        if key != "matches":
            assert compile_errors({"gate.md": gate.format(key=key)}) == []
    refused = compile_errors({"gate.md": gate.format(key="surely-not")})
    assert len(refused) == 1 and refused[0].startswith("invalid-frontmatter: unknown approval key")
    allowed = refused[0].rsplit("allowed: ", 1)[1]
    assert set(documented) == {k.strip() for k in allowed.split(",")}


def test_every_example_on_the_page_compiles_clean() -> None:
    packages: dict[str, dict[str, str]] = defaultdict(dict)
    for block in blocks(FORMAT):
        if block.title is not None:
            skill, filename = block.title.split("/")
            packages[skill][filename] = block.text
    assert set(packages) == {"hollowbrook", "shop"}
    for skill, files in packages.items():
        assert compile_errors(files, name=skill) == [], skill


@pytest.mark.parametrize("style", sorted(QUERY_STYLES))
def test_the_style_table_shows_the_query_the_guest_builds(style: str) -> None:
    cells = table_rows(sections(OPERATION_KEYS, 4)["`style`"])[style]
    arguments = json.loads(cells[0].strip("`"))
    expected = cells[1].split("`")[1]
    (name, value), = arguments.items()
    kind = "object" if isinstance(value, dict) else "array"
    schema = {"type": "object", "properties": {name: {"type": kind}}, "additionalProperties": False}
    operation = (f"---\noperation:\n  method: GET\n  url: https://api.example.com/search\n  query: [{name}]\n"
                 f"  style: {{{name}: {style}}}\n  schema: {json.dumps(schema)}\n---\n")
    package, _ = read_package("shop", {"SKILL.md": MINIMAL_SKILL.format(name="shop"), "search.md": operation})
    compiled, errors = compile_package(package)
    assert compiled is not None, errors
    request = build_request(compiled.document["operations"][0], arguments)
    assert request["url"] == f"https://api.example.com/search?{expected}"


@pytest.mark.parametrize("encoding", ["json", "form", "multipart"])
def test_the_encoding_table_shows_the_content_type_the_guest_sends(encoding: str) -> None:
    media_type = table_rows(sections(OPERATION_KEYS, 4)["`encoding`"])[encoding][0].strip("`")
    operation = (f"---\noperation:\n  method: POST\n  url: https://api.example.com/x\n  body: [a]\n"
                 f"  encoding: {encoding}\n---\n")
    package, _ = read_package("shop", {"SKILL.md": MINIMAL_SKILL.format(name="shop"), "x.md": operation})
    compiled, errors = compile_package(package)
    assert compiled is not None, errors
    request = build_request(compiled.document["operations"][0], {"a": "1"})
    assert request["headers"]["Content-Type"].split(";")[0] == media_type


def test_a_raw_body_goes_under_the_declared_content_type() -> None:
    files = {b.title.split("/")[1]: b.text for b in blocks(FORMAT) if b.title == "shop/upload_photo.md"}
    package, _ = read_package("shop", {"SKILL.md": MINIMAL_SKILL.format(name="shop"), **files})
    compiled, errors = compile_package(package)
    assert compiled is not None, errors
    request = build_request(compiled.document["operations"][0], {"photo_id": "p1", "data": "JFIF"})
    assert request["headers"]["Content-Type"] == "image/jpeg" and request["body"] == "JFIF"
