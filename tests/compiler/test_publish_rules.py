"""Every publish-time rule and error code, in both argument forms, with the line it is reported on."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import HOLLOWBROOK, PackageFactory

from skillhouse.compiler import SCHEMA_LIMIT, compact_size, compile_dir
from skillhouse.skill import ALL_CODES


def errors_of(path: Path) -> list[tuple[str, int, str]]:
    compiled, errors = compile_dir(path)
    assert compiled is None, "expected the package to be refused"
    return [(Path(e.file).name, e.line, e.code) for e in errors]


def compiled_ops(path: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    compiled, errors = compile_dir(path)
    assert errors == [], [str(e) for e in errors]
    assert compiled is not None
    return {op["name"]: op for op in compiled.document["operations"]}


def test_hollowbrook_compiles_clean() -> None:
    ops = compiled_ops(HOLLOWBROOK)
    assert sorted(ops) == ["cancel_booking", "charge", "check_availability", "create_booking", "list_rooms"]
    assert ops["create_booking"]["identity"] == ["arrival", "departure", "guest_name", "room_id"]
    assert ops["charge"]["approval"]["matches"] == "POST /charges"


# a path argument as the compiler publishes it: what translation can put in one segment
PATH_SEGMENT = {
    "type": "string",
    "minLength": 1,
    "not": {"anyOf": [{"enum": [".", ".."]}, {"type": "string", "pattern": "[/\\\\\\u0000-\\u001f\\u007f]"}]},
}


def test_flat_lists_become_one_schema(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "add.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/carts/{cart_id}/items
              query: [dry_run, tags]
              body: [sku, quantity, price, gift]
              optional: [dry_run, tags, gift]
              integer: [quantity, tags]
              number: [price]
              boolean: [dry_run, gift]
              list: [tags]
            ---
            Add an item to a cart.
            """
        }
    )
    op = compiled_ops(pkg)["add"]
    assert op["schema"] == {
        "type": "object",
        "properties": {
            "cart_id": PATH_SEGMENT,
            "dry_run": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "integer"}},
            "sku": {"type": "string"},
            "quantity": {"type": "integer"},
            "price": {"type": "number"},
            "gift": {"type": "boolean"},
        },
        "required": ["cart_id", "price", "quantity", "sku"],
        "additionalProperties": False,
    }
    assert [(a["name"], a["in"]) for a in op["arguments"]] == [
        ("cart_id", "path"),
        ("dry_run", "query"),
        ("tags", "query"),
        ("gift", "body"),
        ("price", "body"),
        ("quantity", "body"),
        ("sku", "body"),
    ]
    assert op["tool_name"] == "shop_add"
    assert op["description"] == "Add an item to a cart."


def test_typo_in_optional_is_refused_not_left_required(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "book.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/bookings
              body: [room_id, note]
              optional: [nte]
            ---
            Book.
            """
        }
    )
    assert errors_of(pkg) == [("book.md", 6, "unknown-qualifier")]


def test_every_qualifier_must_name_a_sent_field(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "op.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/x
              body: [a]
              integer: [b]
              number: [c]
              boolean: [d]
              list: [e]
            ---
            """
        }
    )
    assert errors_of(pkg) == [
        ("op.md", 6, "unknown-qualifier"),
        ("op.md", 7, "unknown-qualifier"),
        ("op.md", 8, "unknown-qualifier"),
        ("op.md", 9, "unknown-qualifier"),
    ]


def test_a_field_in_two_places_is_refused(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "op.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/items/{id}
              query: [mode]
              body: [mode, id]
            ---
            """
        }
    )
    assert sorted(errors_of(pkg)) == [("op.md", 6, "name-in-two-places"), ("op.md", 6, "name-in-two-places")]


def test_a_field_in_two_places_in_schema_form(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "op.md": """\
            ---
            operation:
              method: GET
              url: https://api.test/items/{id}
              query: [id, q]
              schema: |
                {"type": "object", "properties": {"id": {"type": "string"}, "q": {"type": "string"}}}
            ---
            """
        }
    )
    assert errors_of(pkg) == [("op.md", 5, "name-in-two-places")]


def test_get_and_head_have_no_body(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "get.md": """\
            ---
            operation:
              method: GET
              url: https://api.test/x
              body: [a]
            ---
            """,
            "head.md": """\
            ---
            operation:
              method: head
              url: https://api.test/x
              body: [a]
            ---
            """,
            "schema_get.md": """\
            ---
            operation:
              method: GET
              url: https://api.test/x
              query: [a]
              schema: |
                {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
            ---
            """,
        }
    )
    assert errors_of(pkg) == [
        ("get.md", 5, "body-on-get"),
        ("head.md", 5, "body-on-get"),
        ("schema_get.md", 6, "body-on-get"),
    ]


def test_a_path_parameter_must_be_a_whole_segment(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "partial.md": """\
            ---
            operation:
              method: GET
              url: https://api.test/files/{name}.json
            ---
            """,
            "query.md": """\
            ---
            operation:
              method: GET
              url: https://api.test/files?x={name}
            ---
            """,
        }
    )
    assert errors_of(pkg) == [("partial.md", 4, "path-parameter"), ("query.md", 4, "path-parameter")]


def test_a_url_template_must_be_written_as_the_gateway_sends_it(make_package: PackageFactory) -> None:
    # the gateway sends the canonical URL; a template spelled otherwise would be sent differently
    # from what the guest built, or refused on every call
    written = {"escaped.md": "https://api.test/%7Eme/{id}", "dots.md": "https://api.test/a/../b",
               "empty.md": "https://api.test//b", "matrix.md": "https://api.test/b;v=1",
               "lower.md": "https://api.test/b%3b", "fine.md": "https://api.test/v1/%3B/{id}/x?fixed=1"}  # fmt: skip
    pkg = make_package({name: f"---\noperation:\n  method: GET\n  url: {url}\n---\n" for name, url in written.items()})
    assert errors_of(pkg) == [(name, 4, "invalid-operation") for name in sorted(written) if name != "fine.md"]


def test_a_path_parameter_is_always_a_required_string(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "op.md": """\
            ---
            operation:
              method: DELETE
              url: https://api.test/bookings/{id}
              integer: [id]
              optional: [id]
            ---
            """
        }
    )
    assert errors_of(pkg) == [("op.md", 5, "path-parameter"), ("op.md", 6, "path-parameter")]


def test_schema_form_path_parameters_join_the_schema_as_required(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "get.md": """\
            ---
            operation:
              method: GET
              url: https://api.test/pets/{pet_id}/toys/{toy}
              query: [limit]
              schema: |
                {
                  "type": "object",
                  "properties": {
                    "pet_id": {"type": "integer", "description": "The pet."},
                    "limit": {"type": "integer", "maximum": 50}
                  }
                }
            ---
            Get a toy.
            """
        }
    )
    op = compiled_ops(pkg)["get"]
    assert op["schema"]["required"] == ["pet_id", "toy"]
    assert op["schema"]["properties"]["toy"] == PATH_SEGMENT
    assert op["schema"]["properties"]["pet_id"] == {"type": "integer", "description": "The pet."}
    assert [(a["name"], a["in"]) for a in op["arguments"]] == [("pet_id", "path"), ("toy", "path"), ("limit", "query")]


def test_invalid_json_in_a_schema_block_is_located_on_its_line(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "op.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/x
              schema: |
                {
                  "type": "object",
                  "properties": {"a": {"type": "string"},}
                }
            ---
            """
        }
    )
    assert errors_of(pkg) == [("op.md", 8, "invalid-schema")]


def test_schemas_that_are_not_json_schema_objects_are_refused(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "array_root.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/x
              schema: '{"type": "array"}'
            ---
            """,
            "bad_keyword.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/x
              schema: '{"type": "object", "properties": {"a": {"type": "strin"}}}'
            ---
            """,
            "open_root.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/x
              schema: '{"type": "object", "additionalProperties": true}'
            ---
            """,
            "not_a_schema.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/x
              schema: [1, 2]
            ---
            """,
        }
    )
    assert errors_of(pkg) == [
        ("array_root.md", 5, "invalid-schema"),
        ("bad_keyword.md", 5, "invalid-schema"),
        ("not_a_schema.md", 5, "invalid-schema"),
        ("open_root.md", 5, "invalid-schema"),
    ]


def test_type_references_are_expanded_so_each_schema_stands_alone(make_package: PackageFactory) -> None:
    types = {
        "Category": {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}},
        "Pet": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "category": {"$ref": "#/types/Category"}},
        },
    }
    pkg = make_package(
        {
            "types.json": json.dumps(types),
            "add.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/pet
              schema: |
                {"type": "object", "required": ["pet"],
                 "properties": {"pet": {"$ref": "#/types/Pet", "description": "The pet to add."}}}
            ---
            """,
        }
    )
    schema = compiled_ops(pkg)["add"]["schema"]
    assert "$ref" not in json.dumps(schema)
    assert schema["properties"]["pet"] == {
        "type": "object",
        "description": "The pet to add.",
        "properties": {
            "name": {"type": "string"},
            "category": {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}},
        },
    }


def test_a_type_that_contains_itself_stops_at_an_object(make_package: PackageFactory) -> None:
    types = {
        "Node": {
            "type": "object",
            "properties": {"value": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/types/Node"}}},
        },
        "A": {"type": "object", "properties": {"b": {"$ref": "#/types/B"}}},
        "B": {"type": "object", "properties": {"a": {"$ref": "#/types/A"}}},
    }
    pkg = make_package(
        {
            "types.json": json.dumps(types),
            "tree.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/tree
              schema: '{"type": "object", "properties": {"root": {"$ref": "#/types/Node"}, "a": {"$ref": "#/types/A"}}}'
            ---
            """,
        }
    )
    props = compiled_ops(pkg)["tree"]["schema"]["properties"]
    assert props["root"]["properties"]["children"] == {"type": "array", "items": {"type": "object"}}
    assert props["a"] == {"type": "object", "properties": {"b": {"type": "object", "properties": {"a": {"type": "object"}}}}}


def test_unknown_types_and_foreign_references_are_refused(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "types.json": '{"Pet": {"type": "object"}}',
            "missing.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/x
              schema: '{"type": "object", "properties": {"p": {"$ref": "#/types/Pett"}}}'
            ---
            """,
            "foreign.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/x
              schema: '{"type": "object", "properties": {"p": {"$ref": "#/components/schemas/Pet"}}}'
            ---
            """,
        }
    )
    assert errors_of(pkg) == [("foreign.md", 5, "unknown-type"), ("missing.md", 5, "unknown-type")]


def _schema_of_size(size: int) -> str:
    """A schema whose compact JSON (after the compiler adds path-less ``required``) is ``size`` bytes."""
    base = {"type": "object", "properties": {"a": {"type": "string", "description": ""}}, "required": [], "additionalProperties": False}
    padding = size - compact_size(base)
    assert padding >= 0
    base["properties"]["a"]["description"] = "x" * padding  # type: ignore[index]
    assert compact_size(base) == size
    return json.dumps(base)


def test_the_size_cap_is_24576_bytes_of_compact_json(make_package: PackageFactory) -> None:
    fits = make_package(
        {"op.md": f"---\noperation:\n  method: POST\n  url: https://api.test/x\n  schema: '{_schema_of_size(SCHEMA_LIMIT)}'\n---\n"},
        name="fits",
    )
    ops = compiled_ops(fits)
    assert compact_size(ops["op"]["schema"]) == SCHEMA_LIMIT
    over = make_package(
        {"op.md": f"---\noperation:\n  method: POST\n  url: https://api.test/x\n  schema: '{_schema_of_size(SCHEMA_LIMIT + 1)}'\n---\n"},
        name="over",
    )
    assert errors_of(over) == [("op.md", 5, "schema-too-large")]


def test_an_exponential_type_graph_is_refused_quickly(make_package: PackageFactory) -> None:
    # T0 has two fields of T1, T1 two of T2, ... : 2**40 leaves if expanded naively.
    types = {f"T{i}": {"type": "object", "properties": {"l": {"$ref": f"#/types/T{i + 1}"}, "r": {"$ref": f"#/types/T{i + 1}"}}} for i in range(40)}
    types["T40"] = {"type": "string"}
    pkg = make_package(
        {
            "types.json": json.dumps(types),
            "op.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/x
              schema: '{"type": "object", "properties": {"t": {"$ref": "#/types/T0"}}}'
            ---
            """,
        }
    )
    assert errors_of(pkg) == [("op.md", 5, "schema-too-large")]


def test_a_gate_must_match_its_operation(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "charge.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/charge
            approval:
              matches: POST /charges
            ---
            """,
            "refund.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/refunds/{id}
            approval:
              matches: DELETE /refunds/{id}
            ---
            """,
            "ok.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/payouts/{payout_id}
            approval:
              matches: POST /payouts/{id}
            ---
            """,
        }
    )
    assert errors_of(pkg) == [("charge.md", 6, "gate-mismatch"), ("refund.md", 6, "gate-mismatch")]


def test_identity_must_name_sent_fields(make_package: PackageFactory) -> None:
    flat = make_package(
        {
            "book.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/bookings
              body: [room_id, guest]
              identity: [room_id, guest_name]
            ---
            """
        },
        name="flat",
    )
    assert errors_of(flat) == [("book.md", 6, "unknown-identity-field")]
    schema_form = make_package(
        {
            "book.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/bookings
              schema: '{"type": "object", "properties": {"room": {"type": "integer"}}}'
              identity: [room, date]
            ---
            """
        },
        name="schemaform",
    )
    assert errors_of(schema_form) == [("book.md", 6, "unknown-identity-field")]


def test_two_files_that_reduce_to_one_tool_name_collide(make_package: PackageFactory) -> None:
    op = "---\noperation:\n  method: GET\n  url: https://api.test/x\n---\nGet x.\n"
    pkg = make_package({"get.item.md": op, "get item.md": op})
    assert errors_of(pkg) == [("get.item.md", 2, "tool-name-collision")]


def test_a_tool_name_may_not_shadow_an_eager_tool(make_package: PackageFactory) -> None:
    op = "---\noperation:\n  method: GET\n  url: https://api.test/x\n---\n"
    pkg = make_package({"object.md": op}, name="read")
    assert errors_of(pkg) == [("object.md", 2, "tool-name-collision")]


def test_long_tool_names_are_cut_to_64_with_a_hash(make_package: PackageFactory) -> None:
    op = "---\noperation:\n  method: GET\n  url: https://api.test/x\n---\n"
    long_a = "list_" + "a" * 80
    long_b = "list_" + "a" * 79 + "b"
    ops = compiled_ops(make_package({f"{long_a}.md": op, f"{long_b}.md": op}))
    names = {ops[n]["tool_name"] for n in ops}
    assert len(names) == 2
    assert all(len(n) == 64 and n.startswith("shop_list_aaa") for n in names)


def test_operation_blocks_that_are_malformed_say_where(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "a.md": """\
            ---
            operation:
              method: FETCH
              url: ftp://api.test/x
              bodyy: [a]
            ---
            """,
            "b.md": "---\noperation: [GET, /x]\n---\n",
            "c.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/x
              body: a, b
              encoding: xml
              headers: {Authorization: Bearer sk-live}
            ---
            """,
            "d.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/x
              schema: '{"type": "object"}'
              optional: [a]
            ---
            """,
        }
    )
    assert errors_of(pkg) == [
        ("a.md", 3, "invalid-operation"),
        ("a.md", 4, "invalid-operation"),
        ("a.md", 5, "invalid-operation"),
        ("b.md", 2, "invalid-operation"),
        ("c.md", 5, "invalid-operation"),
        ("c.md", 6, "invalid-operation"),
        ("c.md", 7, "invalid-operation"),
        ("d.md", 6, "invalid-operation"),
    ]


def test_a_misspelt_operation_key_is_not_silently_a_plain_document(make_package: PackageFactory) -> None:
    pkg = make_package({"op.md": "---\noperaton:\n  method: GET\n  url: https://api.test/x\n---\n"})
    assert errors_of(pkg) == [("op.md", 2, "invalid-frontmatter")]


def test_extensions_headers_encoding_style_and_names_are_compiled(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "search.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/v1/search
              query: [include, expand]
              header: [request_id]
              schema: |
                {"type": "object", "properties": {
                  "include": {"type": "array", "items": {"type": "string"}},
                  "expand": {"type": "array", "items": {"type": "string"}},
                  "request_id": {"type": "string"},
                  "q": {"type": "string"}}}
              headers: {Stripe-Version: "2023-09-01"}
              encoding: form
              style: {expand: deepObject}
              names: {include: "include[]", request_id: X-Request-Id}
            ---
            Search.
            """
        }
    )
    op = compiled_ops(pkg)["search"]
    assert op["headers"] == {"Stripe-Version": "2023-09-01"}
    assert op["encoding"] == "form"
    assert op["arguments"] == [
        {"name": "include", "in": "query", "wire": "include[]"},
        {"name": "expand", "in": "query", "wire": "expand", "style": "deepObject"},
        {"name": "request_id", "in": "header", "wire": "X-Request-Id"},
        {"name": "q", "in": "body", "wire": "q"},
    ]


def test_extension_mistakes_are_refused(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "op.md": """\
            ---
            operation:
              method: GET
              url: https://api.test/x
              query: [a]
              style: {b: deepObject, a: sideways}
              names: {c: "c[]"}
            ---
            """
        }
    )
    assert errors_of(pkg) == [("op.md", 6, "invalid-operation"), ("op.md", 6, "unknown-qualifier"), ("op.md", 7, "unknown-qualifier")]


def test_skill_manifest_rules(make_package: PackageFactory) -> None:
    cases = {
        "Upper": "---\nname: Upper\ndescription: x\n---\n",
        "double--hyphen": "---\nname: double--hyphen\ndescription: x\n---\n",
        "-lead": "---\nname: -lead\ndescription: x\n---\n",
        "other": "---\nname: not-other\ndescription: x\n---\n",
        "nodesc": "---\nname: nodesc\n---\n",
        "longdesc": "---\nname: longdesc\ndescription: " + "x" * 1025 + "\n---\n",
        "extra": "---\nname: extra\ndescription: x\nversion: 2\n---\n",
        "nofront": "just text\n",
    }
    for name, text in cases.items():
        pkg = make_package({"SKILL.md": text}, name=name)
        codes = {code for _, _, code in errors_of(pkg)}
        assert codes == {"invalid-skill-manifest"}, name
    missing = make_package({"SKILL.md": None}, name="missing")
    assert errors_of(missing) == [("SKILL.md", 1, "invalid-skill-manifest")]


def test_a_name_of_64_characters_is_accepted_and_65_refused(make_package: PackageFactory) -> None:
    ok = "a" * 64
    make_package({"SKILL.md": f"---\nname: {ok}\ndescription: x\n---\n"}, name=ok)
    assert compile_dir(Path(make_package({}, name=ok)))[1] == []
    long = "a" * 65
    pkg = make_package({"SKILL.md": f"---\nname: {long}\ndescription: x\n---\n"}, name=long)
    assert errors_of(pkg) == [("SKILL.md", 2, "invalid-skill-manifest")]


def test_unreadable_files_are_located_errors(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "latin1.md": b"---\noperation:\n  method: GET\n" + b"  url: https://api.test/caf\xe9\n---\n",
            "yaml.md": "---\noperation:\n  method: [GET\n---\n",
            "list.md": "---\n- a\n- b\n---\n",
            "open.md": "---\noperation: {}\n",
            "dup.md": "---\noperation:\n  method: GET\n  method: POST\n---\n",
            "types.json": "{\n  \"A\": {\"type\": \"object\"},\n  oops\n}",
        }
    )
    assert errors_of(pkg) == [
        ("dup.md", 4, "invalid-frontmatter"),
        ("latin1.md", 4, "invalid-frontmatter"),
        ("list.md", 2, "invalid-frontmatter"),
        ("open.md", 1, "invalid-frontmatter"),
        ("types.json", 3, "invalid-schema"),
        ("yaml.md", 4, "invalid-frontmatter"),
    ]


def test_all_errors_of_a_package_are_reported_at_once(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "SKILL.md": "---\nname: wrong\ndescription: x\n---\n",
            "a.md": "---\noperation:\n  method: GET\n  url: https://api.test/x\n  body: [a]\n---\n",
            "b.md": "---\noperation:\n  method: POST\n  url: https://api.test/x\n  body: [a]\n  optional: [b]\n---\n",
        }
    )
    assert {code for _, _, code in errors_of(pkg)} == {"invalid-skill-manifest", "body-on-get", "unknown-qualifier"}


def test_every_error_code_is_exercised_by_this_module() -> None:
    source = Path(__file__).read_text()
    missing = [code for code in ALL_CODES if f'"{code}"' not in source]
    assert missing == []


def test_plain_documents_and_skill_level_gates_are_kept(make_package: PackageFactory) -> None:
    pkg = make_package(
        {
            "rules.md": "# Rules\n\nBe kind.\n",
            "payouts.md": "---\napproval:\n  matches: POST /payouts\n---\nEvery payout is held.\n",
        }
    )
    compiled, errors = compile_dir(pkg)
    assert errors == [] and compiled is not None
    assert compiled.document["documents"] == [
        {"path": "payouts.md", "text": "Every payout is held."},
        {"path": "rules.md", "text": "# Rules\n\nBe kind."},
    ]
    assert compiled.document["gates"] == [{"file": "payouts.md", "matches": "POST /payouts"}]


def test_schema_form_takes_literal_text_around_one_path_parameter(make_package: PackageFactory) -> None:
    """Real APIs write /Accounts/{Sid}.json; hand-written flat lists keep whole segments."""
    pkg = make_package(
        {
            "fetch.md": """\
            ---
            operation:
              method: GET
              url: https://api.test/Accounts/{Sid}.json
              schema: '{"type": "object", "properties": {}}'
            ---
            """,
            "two.md": """\
            ---
            operation:
              method: GET
              url: https://api.test/files/{a}{b}
              schema: '{"type": "object", "properties": {}}'
            ---
            """,
        }
    )
    assert errors_of(pkg) == [("two.md", 4, "path-parameter")]
    del_two = pkg / "two.md"
    del_two.unlink()
    op = compiled_ops(pkg)["fetch"]
    assert op["arguments"] == [{"name": "Sid", "in": "path", "wire": "Sid"}]
    assert op["schema"]["required"] == ["Sid"]


def test_a_raw_body_is_one_string_payload_with_its_media_type(make_package: PackageFactory) -> None:
    ok = make_package(
        {
            "cover.md": """\
            ---
            operation:
              method: PUT
              url: https://api.test/playlists/{id}/images
              encoding: raw
              payload: image
              content_type: image/jpeg
              schema: '{"type": "object", "required": ["image"], "properties": {"image": {"type": "string"}}}'
            ---
            Upload a cover.
            """
        },
        name="ok",
    )
    op = compiled_ops(ok)["cover"]
    assert (op["encoding"], op["payload"], op["content_type"]) == ("raw", "image", "image/jpeg")
    bad = make_package(
        {
            "no_type.md": """\
            ---
            operation:
              method: PUT
              url: https://api.test/x
              encoding: raw
              payload: image
              schema: '{"type": "object", "properties": {"image": {"type": "string"}}}'
            ---
            """,
            "stray.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/x
              content_type: text/plain
              schema: '{"type": "object", "properties": {"a": {"type": "string"}}}'
            ---
            """,
            "not_string.md": """\
            ---
            operation:
              method: PUT
              url: https://api.test/x
              encoding: raw
              payload: n
              content_type: text/plain
              schema: '{"type": "object", "properties": {"n": {"type": "integer"}}}'
            ---
            """,
        },
        name="bad",
    )
    assert errors_of(bad) == [("no_type.md", 5, "invalid-operation"), ("not_string.md", 6, "invalid-operation"), ("stray.md", 5, "invalid-operation")]


def test_a_curation_overlay_that_was_never_applied_refuses_the_package(make_package: PackageFactory) -> None:
    # the wizard applies curation.yaml and records it (tests/openapi/test_curation.py); one never applied,
    # or with keys the overlay does not have, is refused at its lines
    pkg = make_package(
        {
            "list.md": "---\noperation:\n  method: GET\n  url: https://api.test/pets\n---\nList pets.\n",
            "curation.yaml": "operations:\n  listPets:\n    nmae: pets\n",
        }
    )
    assert errors_of(pkg) == [("curation.yaml", 1, "stale-curation"), ("curation.yaml", 3, "invalid-curation")]


def test_allow_empty_names_query_arguments_only_and_reaches_the_release(make_package: PackageFactory) -> None:
    refused = make_package(
        {
            "op.md": """\
            ---
            operation:
              method: POST
              url: https://api.test/x
              query: [q]
              body: [b]
              allow_empty: [q, b]
            ---
            """
        }
    )
    assert errors_of(refused) == [("op.md", 7, "unknown-qualifier")]
    accepted = make_package(
        {
            "op.md": """\
            ---
            operation:
              method: GET
              url: https://api.test/x
              query: [q, r]
              optional: [q, r]
              allow_empty: [q]
            ---
            """
        }
    )
    arguments = compiled_ops(accepted)["op"]["arguments"]
    assert arguments == [{"name": "q", "in": "query", "wire": "q", "allow_empty": True}, {"name": "r", "in": "query", "wire": "r"}]


def test_equal_arguments_of_a_package_are_one_record_and_different_ones_are_not(make_package: PackageFactory) -> None:
    from skillhouse.compiler import compile_package
    from skillhouse.skill import read_package_dir

    schema = json.dumps(json.dumps({"type": "object", "properties": {"q": {"type": "string", "description": "Café"}}}))
    op = "---\noperation:\n  method: GET\n  url: https://api.test/items/{id}\n  query: [q]\nEXTRA  schema: " + schema + "\n---\n"
    pkg = make_package(
        {
            "a.md": op.replace("EXTRA", ""),
            "b.md": op.replace("EXTRA", ""),
            "c.md": op.replace("EXTRA", "  names: {q: Q}\n"),
            "d.md": op.replace("EXTRA", "  allow_empty: [q]\n  style: {id: label}\n"),
        }
    )
    package, read_errors = read_package_dir(pkg)
    compiled, errors = compile_package(package)
    assert compiled is not None and not read_errors, [str(e) for e in [*read_errors, *errors]]
    a, b, c, d = (op.arguments for op in compiled.operations)
    assert [(x.name, x.location) for x in a] == [("id", "path"), ("q", "query")]
    assert a[0] is b[0] and a[1] is b[1] and a[0] is c[0]  # made once, shared: a frozen record is never changed
    assert c[1] != a[1] and c[1].wire == "Q" and d[1].allow_empty and d[0].style == "label" and d[0] != a[0]
