"""The wizard hands the compiler the operation files' and SKILL.md's data as rendered: exactly what reading them gives.

Its compile skips parsing the files it has just written; these tests hold the handed data to the
reader's parse of the written text (data, key order and value types, body and its line) on every
corpus spec and on fuzzed specs, and the reading path (taken when the handed compile reports an
error, so errors get their lines) to the same output.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.openapi.specs import SPECS, import_of, openapi, spec_of

from skillhouse.compiler.forms import written_plain
from skillhouse.compiler.release import compile_package
from skillhouse.openapi import ImportResult, import_openapi, spec_from_data, wizard
from skillhouse.skill.frontmatter import RenderedJson, split_markdown
from skillhouse.skill.package import SkillPackage, read_package


@contextmanager
def handed_packages() -> Iterator[list[SkillPackage]]:
    seen: list[SkillPackage] = []

    def recording(package: SkillPackage, version: str | None = None) -> Any:
        seen.append(package)
        return compile_package(package, version)

    with mock.patch.object(wizard, "compile_package", recording):
        yield seen


def assert_handed_as_read(result: ImportResult, first: SkillPackage) -> None:
    # the shared types as parsed from the written types.json, key order and value types included
    assert repr(first.types) == repr(json.loads(result.files["types.json"]) if "types.json" in result.files else {})
    read_manifest, errors = read_package(first.name, {"SKILL.md": result.files["SKILL.md"]}, label="")
    assert errors == [] and read_manifest.manifest is not None and first.manifest is not None
    assert repr(first.manifest) == repr(read_manifest.manifest)
    operation_files = sorted(f for f in result.files if f not in ("SKILL.md", "types.json"))
    assert [md.path for md in first.files] == operation_files
    for md in first.files:
        read, errors = split_markdown(md.path, md.text)
        assert errors == [] and read is not None and read.frontmatter is not None and md.frontmatter is not None
        assert md.text == result.files[md.path]
        # repr tells 1 from 1.0 from True and sees key order
        handed, written = md.frontmatter.data["operation"], read.frontmatter.data["operation"]
        assert repr({**md.frontmatter.data, "operation": {**handed, "schema": None}}) == repr(
            {**read.frontmatter.data, "operation": {**written, "schema": None}}
        )
        # the schema comes as the value its text was rendered from, which the compiler takes
        assert type(handed["schema"]) is RenderedJson
        assert repr(handed["schema"].value) == repr(json.loads(written["schema"]))
        assert handed["schema"].plain == written_plain(written["schema"])  # whether the compile expands it
        assert (md.frontmatter.body, md.frontmatter.body_line, md.frontmatter.start_line) == (
            read.frontmatter.body,
            read.frontmatter.body_line,
            read.frontmatter.start_line,
        )


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_the_data_handed_to_the_compiler_is_what_reading_each_corpus_file_gives(path: Path) -> None:
    with handed_packages() as seen:
        result = import_openapi(spec_of(path))
    assert result.compiled is not None and seen
    assert_handed_as_read(result, seen[0])


operation_names = st.text(alphabet=st.characters(exclude_categories=["Cs"]), min_size=1, max_size=12)
parameters = st.lists(
    st.fixed_dictionaries(
        {
            "name": operation_names,
            "in": st.sampled_from(["query", "header", "path", "cookie"]),
            "schema": st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "array", "items": {"type": "string"}}]),
        },
        optional={"style": st.sampled_from(["form", "deepObject", "pipeDelimited"]), "explode": st.booleans(), "required": st.booleans()},
    ),
    max_size=5,
)
texts = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=parameters, summary=texts, description=texts, media=st.sampled_from(["application/json", "application/x-www-form-urlencoded", "text/plain"]),
       title=texts, version=texts | st.sampled_from(["1.0.0", "2018-11-08", "1.0", "v2", "1001.0.0-SNAPSHOT", "yes", "12:30"]))
def test_the_data_handed_to_the_compiler_is_what_reading_fuzzed_operations_gives(
    params: list[dict[str, Any]], summary: str, description: str, media: str, title: str, version: str
) -> None:
    body = {"content": {media: {"schema": {"type": "object", "properties": {"a b": {"type": "number", "enum": [1, 1.5]}}}}}}
    spec = openapi({"/things/{id}": {"post": {"operationId": summary or "op", "summary": summary, "description": description,
                                              "parameters": params, "requestBody": body}}})
    spec["info"] = {"title": title, "version": version, "description": f"{title}: {description}"}
    with handed_packages() as seen:
        result = import_openapi(spec_from_data(spec))
    assert result.compiled is not None and seen
    assert result.report.converter_errors() == []
    if len(seen) == 1:  # handed as rendered and compiled clean
        assert_handed_as_read(result, seen[0])


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_reading_the_written_files_back_gives_the_same_skill_release_and_report(path: Path) -> None:
    # The reading path (taken whenever the handed compile reports an error) on a whole corpus spec.
    with mock.patch.object(wizard, "_compile_as_rendered", lambda *args: None):
        read_back = import_openapi(spec_of(path))
    handed = import_of(path)
    assert read_back.compiled is not None and handed.compiled is not None
    assert read_back.compiled.digest == handed.compiled.digest
    assert read_back.files == handed.files
    assert read_back.report.as_dict() == handed.report.as_dict()


def test_a_large_schema_is_handed_as_its_text_and_parsed_when_used() -> None:
    # its data would take several times the memory of its text while every operation waits for the compile
    wide = {"type": "object", "properties": {f"field_{n}": {"type": "string", "description": "A field. " * 20} for n in range(80)}}
    body = {"content": {"application/json": {"schema": wide}}}
    spec = openapi({"/big": {"post": {"operationId": "big", "requestBody": body}}, "/small": {"get": {"operationId": "small"}}})
    with handed_packages() as seen:
        result = import_openapi(spec_from_data(spec))
    assert result.compiled is not None and len(seen) == 1
    assert_handed_as_read(result, seen[0])
    schemas = {md.path: md.frontmatter.data["operation"]["schema"] for md in seen[0].files if md.frontmatter is not None}
    assert schemas["big.md"].value is not schemas["big.md"].value  # a new parse each time
    assert schemas["small.md"].value is schemas["small.md"].value  # the data it was rendered from
