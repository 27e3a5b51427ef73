"""Property tests: any arguments valid for an operation's schema translate into a well-formed request."""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from skillhouse.compiler.wire_limits import wire_limited
from skillhouse.gateway.canonical_url import canonical_url
from skillhouse.guest import build_request
from skillhouse.guest.validation import json_equal

from .strategies import instance_of, schemas

# each example draws a whole operation and its arguments (about three draws for each one kept): at 300 this was
# the slowest test in tests/guest; the default run takes 150, ``make fuzz`` (SKILLHOUSE_FUZZ=long) 1,500
EXAMPLES = 1500 if os.environ.get("SKILLHOUSE_FUZZ") == "long" else 150
SCALARS = st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}])
QUERY_SCHEMAS = SCALARS | SCALARS.map(lambda s: {"type": "array", "items": s})
URL_SAFE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%/:?&=,")


@st.composite
def operations(draw: st.DrawFn) -> dict[str, Any]:
    """A release operation document as the compiler emits it (arguments: path, query, header, body sorted)."""
    method = draw(st.sampled_from(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]))
    names = iter(f"a{i}" for i in range(20))
    path = [next(names) for _ in range(draw(st.integers(0, 2)))]
    query = [next(names) for _ in range(draw(st.integers(0, 3)))]
    header = [next(names) for _ in range(draw(st.integers(0, 1)))]
    body = [] if method in ("GET", "HEAD") else [next(names) for _ in range(draw(st.integers(0, 3)))]
    properties: dict[str, Any] = {n: {"type": "string"} for n in path}
    properties.update({n: draw(QUERY_SCHEMAS) for n in query})
    properties.update({n: {"type": "string", "pattern": "^[ -~]*$"} for n in header})
    properties.update({n: draw(schemas) for n in body})
    optional = (
        draw(st.lists(st.sampled_from(query + header + body), unique=True)) if query + header + body else []
    )
    arguments: list[dict[str, Any]] = [{"name": n, "in": "path", "wire": n} for n in path]
    for n in query:
        argument: dict[str, Any] = {
            "name": n,
            "in": "query",
            "wire": draw(st.sampled_from([n, f"{n}[]", f"x-{n}"])),
        }
        style = draw(st.sampled_from([None, "comma", "pipeDelimited", "spaceDelimited"]))
        if style and properties[n]["type"] == "array":
            argument["style"] = style
        if draw(st.booleans()):
            argument["allow_empty"] = True
        arguments.append(argument)
    arguments += [{"name": n, "in": "header", "wire": f"X-{n}"} for n in header]
    arguments += [{"name": n, "in": "body", "wire": n} for n in sorted(body)]
    template = "https://api.test/v1" + "".join(f"/things/{{{n}}}" for n in path)
    return {
        "name": "op",
        "tool_name": "s_op",
        "method": method,
        "url": template,
        "arguments": arguments,
        # with the wire's limits the compiler publishes (path segments, header values, delimited items)
        "schema": wire_limited(
            {
                "type": "object",
                "properties": properties,
                "required": sorted(n for n in properties if n not in optional),
                "additionalProperties": False,
            },
            path,
            header,
            {a["name"]: a["style"] for a in arguments if "style" in a},
        ),
        "encoding": draw(st.sampled_from(["json", "form", "multipart"])),
        "headers": {},
    }


@pytest.mark.fuzz
@settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(st.data())
def test_any_arguments_valid_for_the_schema_translate(data: st.DataObject) -> None:
    operation = data.draw(operations(), label="operation")
    arguments = data.draw(instance_of(operation["schema"]), label="arguments")
    assume(Draft202012Validator(operation["schema"]).is_valid(arguments))
    # no assumption about path values beyond the schema: it publishes what a segment cannot hold
    path_names = [a["name"] for a in operation["arguments"] if a["in"] == "path"]

    request = build_request(operation, arguments)

    assert request["method"] == operation["method"]
    assert set(request["url"]) <= URL_SAFE, request["url"]
    # the gateway sends exactly what the guest built: the guest's URL is already canonical
    assert canonical_url(request["url"]).text == request["url"]
    parts = urlsplit(request["url"])
    segments = parts.path.split("/")[3::2]  # /v1/things/{a}/things/{b}
    assert [unquote(s) for s in segments] == [arguments[n] for n in path_names]
    sent_query = {unquote(k) for k, _ in parse_qsl(parts.query, keep_blank_values=True)}
    for argument in operation["arguments"]:
        value = arguments.get(argument["name"])
        if argument["in"] == "query":
            # an optional empty string is left out, unless the argument allows empty values
            left_out = value == "" and argument["name"] not in operation["schema"]["required"] and not argument.get("allow_empty")
            assert (argument["wire"] in sent_query) == (value is not None and value != [] and not left_out), argument
        if argument["in"] == "header":
            assert (argument["wire"] in request["headers"]) == (value is not None)
    has_body_arguments = any(a["in"] == "body" for a in operation["arguments"])
    assert (request["body"] is not None) == has_body_arguments
    assert ("Content-Type" in request["headers"]) == (request["body"] is not None)
    if request["body"] is not None and operation["encoding"] == "json":
        decoded = json.loads(request["body"])
        expected = {
            a["wire"]: arguments[a["name"]]
            for a in operation["arguments"]
            if a["in"] == "body" and a["name"] in arguments
        }
        assert json_equal(decoded, expected)
