"""What the pinned outputs of ``test_output_pinned.py`` stand for, stated as properties.

The pins say the output did not move; these say what it is. The release digest is SHA-256 of the
RFC 8785 JSON of the release, so it follows the release's content and nothing else: not the order its
keys were built in, not the directory order, line endings or YAML spelling of the package files, and
it moves when any byte of an operation does. The written files and the report are a function of the
spec's content: the same across processes and hash seeds, and whether the spec is JSON or YAML, LF
or CRLF. The report accounts for every operation of the spec and for every file written.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import rfc8785
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import ROOT
from tests.openapi.specs import SPECS, import_of, spec_of
from tests.openapi.test_output_pinned import PINNED, files_digest, report_digest

from skillhouse.compiler import compile_dir, compile_package
from skillhouse.compiler.release import release_digest
from skillhouse.openapi import ImportResult, import_openapi, load_spec
from skillhouse.openapi.wizard import HTTP_METHODS
from skillhouse.skill import read_package
from skillhouse.skill.frontmatter import split_markdown

SMALL = ["petstore-v3.yaml", "readme-3.0-discriminators.json", "readme-3.0-parameters-style.json"]
PETSTORE = next(p for p in SPECS if p.name == "petstore-v3.yaml")


def _corpus(name: str) -> Path:
    return next(p for p in SPECS if p.name == name)


def _shuffled(value: Any, rng: random.Random) -> Any:
    """``value`` with every mapping's keys in a random order (lists keep theirs: their order is data)."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {key: _shuffled(item, rng) for key, item in items}
    if isinstance(value, list):
        return [_shuffled(item, rng) for item in value]
    return value


def _digest(name: str, files: dict[str, Any]) -> str | None:
    package, read_errors = read_package(name, files)
    compiled, errors = compile_package(package)
    return None if read_errors or errors or compiled is None else compiled.digest


def _operation_files(result: ImportResult) -> list[str]:
    return sorted(f for f in result.files if f not in ("SKILL.md", "types.json"))


# --- the release digest --------------------------------------------------------------------------


@pytest.mark.parametrize("name", SMALL)
def test_the_release_digest_is_sha256_of_the_rfc8785_json_of_the_release_in_any_key_order(name: str) -> None:
    result = import_of(_corpus(name))
    assert result.compiled is not None
    body = {k: v for k, v in result.compiled.document.items() if k != "digest"}
    for seed in range(3):
        reordered = _shuffled(body, random.Random(seed))
        # the reference encoder, independent of the compiler's own fast path
        assert "sha256:" + hashlib.sha256(rfc8785.dumps(reordered)).hexdigest() == result.compiled.digest
        assert release_digest(reordered) == result.compiled.digest
    assert result.compiled.digest == PINNED[name][0]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rng=st.randoms(use_true_random=False), endings=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1, max_size=4),
       as_bytes=st.booleans(), bom=st.booleans())
def test_the_release_digest_is_the_same_in_any_file_order_line_endings_and_encoding(
    rng: random.Random, endings: list[str], as_bytes: bool, bom: bool
) -> None:
    result = import_of(PETSTORE)
    assert result.compiled is not None
    items = list(result.files.items())
    rng.shuffle(items)
    files: dict[str, Any] = {}
    for index, (filename, text) in enumerate(items):
        spelled = text.replace("\n", endings[index % len(endings)])
        files[filename] = (b"\xef\xbb\xbf" if bom else b"") + spelled.encode() if as_bytes else spelled
    assert _digest(result.name, files) == result.compiled.digest


def test_the_release_digest_is_the_same_for_a_directory_written_in_any_order(tmp_path: Path) -> None:
    result = import_of(PETSTORE)
    assert result.compiled is not None
    digests = set()
    for seed in range(3):
        folder = tmp_path / str(seed) / result.name
        folder.mkdir(parents=True)
        names = list(result.files)
        random.Random(seed).shuffle(names)
        for filename in names:
            (folder / filename).write_text(result.files[filename], encoding="utf-8", newline="\r\n" if seed == 2 else "\n")
        compiled, errors = compile_dir(folder)
        assert errors == [] and compiled is not None
        digests.add(compiled.digest)
    assert digests == {result.compiled.digest}


def _respelled(text: str, rng: random.Random, flow: bool) -> str:
    """The operation file with its frontmatter YAML written again: keys reordered, block or flow style."""
    markdown, errors = split_markdown("op.md", text)
    assert errors == [] and markdown is not None and markdown.frontmatter is not None
    data = _shuffled(markdown.frontmatter.data, rng)
    return "---\n" + yaml.safe_dump(data, sort_keys=False, default_flow_style=flow, allow_unicode=True, width=10**6) + "---\n" + markdown.frontmatter.body


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rng=st.randoms(use_true_random=False), flow=st.booleans())
def test_the_release_digest_follows_the_frontmatter_data_not_its_yaml_spelling(rng: random.Random, flow: bool) -> None:
    result = import_of(PETSTORE)
    files = {f: _respelled(t, rng, flow) if f in _operation_files(result) else t for f, t in result.files.items()}
    assert files != result.files
    assert result.compiled is not None and _digest(result.name, files) == result.compiled.digest


def _leaves(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _leaves(item, (*at, key))]
    if isinstance(value, list):
        return [leaf for index, item in enumerate(value) for leaf in _leaves(item, (*at, index))]
    return [at] if isinstance(value, str | int | float) else []


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return value + "x"
    return value + 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_release_digest_changes_when_any_byte_of_an_operation_changes(data: st.DataObject) -> None:
    result = import_of(PETSTORE)
    assert result.compiled is not None
    filename = data.draw(st.sampled_from(_operation_files(result)))
    markdown, _ = split_markdown(filename, result.files[filename])
    assert markdown is not None and markdown.frontmatter is not None
    front, body = markdown.frontmatter.data, markdown.frontmatter.body

    # a character anywhere in the prose
    where = data.draw(st.integers(0, len(body)))
    prose_changed = result.files[filename][: len(result.files[filename]) - len(body)] + body[:where] + "x" + body[where:]
    assert _digest(result.name, {**result.files, filename: prose_changed}) != result.compiled.digest

    # any value of the operation block, the schema's included
    operation = json.loads(json.dumps(front["operation"]))
    operation["schema"] = json.loads(operation["schema"])
    path = data.draw(st.sampled_from(_leaves(operation)))
    holder = operation
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = _changed(holder[path[-1]])
    operation["schema"] = json.dumps(operation["schema"])
    text = "---\n" + yaml.safe_dump({**front, "operation": operation}, sort_keys=False, width=10**6) + "---\n" + body
    # a different release, or a refusal: never the same digest
    assert _digest(result.name, {**result.files, filename: text}) != result.compiled.digest, path


# --- the written files and the report ------------------------------------------------------------

_DIGESTS_IN_A_FRESH_PROCESS = """
import sys
sys.path.insert(0, sys.argv[2])
from tests.openapi.test_output_pinned import files_digest, report_digest
from skillhouse.openapi import import_openapi
result = import_openapi(sys.argv[1])
print(result.compiled.digest, files_digest(result), report_digest(result))
"""


def test_the_written_files_report_and_release_are_the_same_in_fresh_processes_with_other_hash_seeds() -> None:
    result = import_of(PETSTORE)
    assert result.compiled is not None
    here = f"{result.compiled.digest} {files_digest(result)} {report_digest(result)}"
    for seed in ("1", "4242"):
        run = subprocess.run(
            [sys.executable, "-c", _DIGESTS_IN_A_FRESH_PROCESS, str(PETSTORE), str(ROOT)],
            capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed}, cwd=ROOT, check=True,
        )
        assert run.stdout.split() == here.split()
    assert tuple(here.split()) == PINNED[PETSTORE.name]


@pytest.mark.parametrize("name", ["petstore-v3.yaml", "readme-3.0-discriminators.json"])
def test_the_written_files_and_report_are_the_same_however_the_spec_is_spelled(name: str, tmp_path: Path) -> None:
    source = _corpus(name)
    expected = import_of(source)
    data = spec_of(source).root
    spellings = {
        "as.json": json.dumps(data, indent=1),
        "as.yaml": yaml.safe_dump(data, sort_keys=False, allow_unicode=True),
        "crlf.yaml": yaml.safe_dump(data, sort_keys=False, allow_unicode=True).replace("\n", "\r\n"),
        "flow.yaml": yaml.safe_dump(data, sort_keys=False, default_flow_style=True, width=10**6),
        "original-crlf" + source.suffix: source.read_text(encoding="utf-8").replace("\n", "\r\n"),
    }
    for filename, text in spellings.items():
        path = tmp_path / filename
        path.write_bytes(text.encode("utf-8"))
        result = import_openapi(load_spec(path))
        assert (files_digest(result), report_digest(result)) == PINNED[name][1:], filename
        assert result.files == expected.files, filename


def _spec_operations(path: Path) -> list[tuple[str, str]]:
    document = spec_of(path)
    found = []
    for url, raw_item in document.root.get("paths", {}).items():
        item, _ = document.deref(raw_item, "")
        found.extend((key.upper(), url) for key in item if key in HTTP_METHODS)
    return found


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_the_report_accounts_for_every_operation_of_the_spec_and_every_file_written(path: Path) -> None:
    result = import_of(path)
    report = result.report
    assert result.compiled is not None
    assert [(o.method, o.path) for o in report.outcomes] == _spec_operations(path)
    made = sorted(o.name for o in report.outcomes if o.status in ("written", "adapted"))
    assert made == sorted(f.removesuffix(".md") for f in _operation_files(result))
    assert sorted(op.name for op in result.compiled.operations) == made
    assert all(o.notes for o in report.outcomes if o.status != "written")
    assert all(not o.notes for o in report.outcomes if o.status == "written")
    totals = report.totals()
    assert totals == {
        "operations": len(report.outcomes),
        "written": sum(o.status == "written" for o in report.outcomes),
        "adapted": sum(o.status == "adapted" for o in report.outcomes),
        "skipped": sum(o.status == "skipped" for o in report.outcomes),
    }
    assert report.converter_errors() == []
