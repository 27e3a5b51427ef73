"""Property-based tests: compile is deterministic and order-insensitive; the hash follows meaning;
arbitrary input gives located errors and never another exception."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import HOLLOWBROOK, ROOT

from skillhouse.compiler import compile_dir, compile_package
from skillhouse.skill import ALL_CODES, read_package

FUZZ_EXAMPLES = 2000 if os.environ.get("SKILLHOUSE_FUZZ") == "long" else 150
field_names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)


@st.composite
def operations(draw: st.DrawFn) -> dict[str, Any]:
    method = draw(st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]))
    names = draw(st.lists(field_names, min_size=0, max_size=8, unique=True))
    n_path = draw(st.integers(0, min(2, len(names))))
    path, rest = names[:n_path], names[n_path:]
    if method == "GET":
        query, body = rest, []
    else:
        split = draw(st.integers(0, len(rest)))
        query, body = rest[:split], rest[split:]
    sent = query + body
    optional = draw(st.lists(st.sampled_from(sent), unique=True)) if sent else []
    kinds = {n: draw(st.sampled_from(["string", "integer", "number", "boolean"])) for n in sent}
    lists = draw(st.lists(st.sampled_from(sent), unique=True)) if sent else []
    identity = draw(st.lists(st.sampled_from(sent), unique=True)) if sent else []
    segments = "/".join(f"seg{i}/{{{p}}}" for i, p in enumerate(path))
    prose = draw(st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=40))
    return {
        "method": method,
        "url": f"https://api.test/v1/{segments}".rstrip("/"),
        "query": query,
        "body": body,
        "optional": optional,
        "kinds": kinds,
        "list": lists,
        "identity": identity,
        "prose": prose.replace("---", "-"),
    }


@st.composite
def packages(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    stems = draw(st.lists(st.from_regex(r"[a-z][a-z_]{0,12}", fullmatch=True), min_size=1, max_size=4, unique=True))
    return {stem: draw(operations()) for stem in stems}


def render(spec: dict[str, Any], rng: Any, flow: bool) -> str:
    """Write one operation file; key order, list style and the order of set-like lists vary."""
    op: dict[str, Any] = {"method": spec["method"], "url": spec["url"]}
    if spec["query"]:
        op["query"] = spec["query"]
    if spec["body"]:
        op["body"] = spec["body"]
    for kind in ("integer", "number", "boolean"):
        members = [n for n, k in spec["kinds"].items() if k == kind]
        if members:
            op[kind] = rng.sample(members, len(members))
    for key in ("optional", "list", "identity"):
        if spec[key]:
            op[key] = rng.sample(spec[key], len(spec[key]))
    keys = list(op)
    rng.shuffle(keys)
    shuffled = {k: op[k] for k in keys}
    text = yaml.safe_dump({"operation": shuffled}, default_flow_style=flow, sort_keys=False, allow_unicode=True)
    return f"---\n{text}---\n{spec['prose']}\n"


def files_for(pkg: dict[str, dict[str, Any]], rng: Any, flow: bool) -> dict[str, str]:
    files = {"SKILL.md": "---\ndescription: Generated.\nname: gen\n---\nUse it.\n"}
    if rng.random() < 0.5:
        files["SKILL.md"] = "---\nname: gen\ndescription: 'Generated.'\n---\nUse it.\n"
    for stem, spec in pkg.items():
        files[f"{stem}.md"] = render(spec, rng, flow)
    items = list(files.items())
    rng.shuffle(items)
    return dict(items)


def digest_of(files: dict[str, str]) -> tuple[str, bytes]:
    package, read_errors = read_package("gen", files)
    compiled, errors = compile_package(package)
    assert read_errors == [] and errors == [], [str(e) for e in read_errors + errors]
    assert compiled is not None
    return compiled.digest, compiled.canonical()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(packages(), st.randoms(use_true_random=False))
def test_compile_is_deterministic_and_order_insensitive(pkg: dict[str, dict[str, Any]], rng: Any) -> None:
    first = digest_of(files_for(pkg, rng, flow=False))
    assert digest_of(files_for(pkg, rng, flow=True)) == first
    assert digest_of(files_for(pkg, rng, flow=False)) == first
    # a checkout with Windows (or old Mac) line endings is the same package
    ending = rng.choice(["\r\n", "\r"])
    assert digest_of({k: v.replace("\n", ending) for k, v in files_for(pkg, rng, flow=False).items()}) == first


MEANING_CHANGES = [
    ("method", lambda s: {**s, "method": "PUT" if s["method"] != "PUT" else "PATCH", "body": s["body"], "query": s["query"]}),
    ("url", lambda s: {**s, "url": s["url"] + "/more"}),
    ("prose", lambda s: {**s, "prose": s["prose"] + " And more."}),
    ("new field", lambda s: {**s, "query": [*s["query"], "zz_new"]}),
]


@settings(max_examples=60, deadline=None)
@given(packages(), st.sampled_from(MEANING_CHANGES), st.randoms(use_true_random=False))
def test_the_hash_changes_exactly_when_meaning_changes(pkg: dict[str, dict[str, Any]], change: Any, rng: Any) -> None:
    base, _ = digest_of(files_for(pkg, rng, flow=False))
    stem = sorted(pkg)[0]
    spec = pkg[stem]
    changed = change[1](spec)
    if changed["method"] == "GET" and changed["body"]:
        changed["method"] = "POST"
    variant = {**pkg, stem: changed}
    assert digest_of(files_for(variant, rng, flow=False))[0] != base
    # a change of a type of one field is a change of meaning too
    if spec["query"] or spec["body"]:
        name = (spec["query"] + spec["body"])[0]
        kinds = {**spec["kinds"], name: "integer" if spec["kinds"][name] != "integer" else "boolean"}
        typed = {**pkg, stem: {**spec, "kinds": kinds}}
        assert digest_of(files_for(typed, rng, flow=False))[0] != base


def test_the_canonical_release_is_byte_identical_across_processes() -> None:
    """A different hash seed (set iteration order) and a fresh interpreter give the same bytes."""
    compiled, _ = compile_dir(HOLLOWBROOK)
    assert compiled is not None
    code = "import sys; from skillhouse.compiler import compile_dir; sys.stdout.buffer.write(compile_dir(sys.argv[1])[0].canonical())"
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code, str(HOLLOWBROOK)], capture_output=True, env=env, check=True, cwd=ROOT)
        assert out.stdout == compiled.canonical()
    assert json.loads(compiled.canonical())["digest"] == compiled.digest


def _assert_located(name: str, files: dict[str, str | bytes]) -> None:
    package, read_errors = read_package(name, files)
    _compiled, errors = compile_package(package)
    for error in read_errors + errors:
        assert error.code in ALL_CODES
        assert error.line >= 1
        assert error.file.startswith(f"{name}/")
        assert error.message


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400), st.sampled_from(["op.md", "SKILL.md", "types.json"]))
def test_fuzz_arbitrary_bytes_give_located_errors(data: bytes, filename: str) -> None:
    files: dict[str, str | bytes] = {"SKILL.md": "---\nname: fz\ndescription: x\n---\n", filename: data}
    _assert_located("fz", files)
    _assert_located("fz", {**files, filename: b"---\n" + data + b"\n---\n"})


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
operation_keys = st.sampled_from(
    ["method", "url", "body", "query", "optional", "integer", "number", "boolean", "list", "identity",
     "schema", "header", "headers", "encoding", "style", "names", "payload", "bogus"]
)


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(operation_keys, yaml_values | st.lists(field_names, max_size=4) | st.sampled_from(["GET", "POST", "https://a.test/{x}/y"]), max_size=8),
    st.one_of(st.none(), yaml_values),
)
def test_fuzz_arbitrary_yaml_gives_located_errors(operation: dict[str, Any], approval: Any) -> None:
    front: dict[str, Any] = {"operation": operation}
    if approval is not None:
        front["approval"] = approval
    text = "---\n" + yaml.safe_dump(front, allow_unicode=True) + "---\nProse.\n"
    _assert_located("fz", {"SKILL.md": "---\nname: fz\ndescription: x\n---\n", "op.md": text})


@settings(max_examples=FUZZ_EXAMPLES // 2, deadline=None)
@given(yaml_values)
def test_fuzz_arbitrary_types_json_gives_located_errors(types: Any) -> None:
    op = '---\noperation:\n  method: POST\n  url: https://a.test/x\n  schema: \'{"type": "object", "properties": {"a": {"$ref": "#/types/a"}}}\'\n---\n'
    _assert_located("fz", {"SKILL.md": "---\nname: fz\ndescription: x\n---\n", "op.md": op, "types.json": json.dumps(types)})


def test_hollowbrook_release_snapshot_is_stable() -> None:
    """Hollowbrook's release: its format, name, version and tool names (its digest is not pinned)."""
    compiled, _ = compile_dir(Path(HOLLOWBROOK))
    assert compiled is not None
    document = json.loads(compiled.canonical())
    assert document["format"] == "skillhouse.release/1"
    assert document["skill"] == "hollowbrook" and document["version"] == "1.0.0"
    assert [op["tool_name"] for op in document["operations"]] == [
        "hollowbrook_cancel_booking",
        "hollowbrook_charge",
        "hollowbrook_check_availability",
        "hollowbrook_create_booking",
        "hollowbrook_list_rooms",
    ]
