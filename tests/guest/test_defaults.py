"""An operation's ``defaults:`` (what ``curation.yaml``'s ``default`` writes) fill the arguments a call leaves out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.gateway.wire import json_upstream
from tests.guest.conftest import echo_upstream, write_package

from skillhouse.compiler import compile_dir
from skillhouse.host import TurnHost, make_runner

LIST = """
---
operation:
  method: GET
  url: https://api.test/pets
  query: [limit, kind]
  schema:
    type: object
    properties:
      limit: {type: integer, maximum: 100, default: 20}
      kind: {type: string}
    additionalProperties: false
  defaults: {limit: 20}
---
List pets.
"""


def _sent(release: dict[str, Any], arguments: dict[str, Any]) -> Any:
    runner = make_runner(TurnHost([release], json_upstream(echo_upstream)), "inprocess")
    answer = json.loads(runner.call_tool("shop_list", json.dumps(arguments)))
    return answer


def test_a_call_leaving_out_a_defaulted_argument_sends_the_default(tmp_path: Path) -> None:
    compiled, errors = compile_dir(write_package(tmp_path, "shop", {"list.md": LIST}))
    assert compiled is not None, [str(e) for e in errors]
    release = compiled.document
    assert release["operations"][0]["defaults"] == {"limit": 20}
    left_out = json.dumps(_sent(release, {"kind": "cat"}))
    given = json.dumps(_sent(release, {"kind": "cat", "limit": 5}))
    assert "https://api.test/pets?limit=20&kind=cat" in left_out
    assert "https://api.test/pets?limit=5&kind=cat" in given and "limit=20" not in given


def test_defaults_must_name_optional_arguments_with_values_their_schema_accepts(tmp_path: Path) -> None:
    broken = LIST.replace("defaults: {limit: 20}", "defaults: {limit: 500, colour: red, kind: 3}").replace(
        "additionalProperties: false", "required: [kind]\n    additionalProperties: false"
    )
    _, errors = compile_dir(write_package(tmp_path, "shop", {"list.md": broken}))
    messages = sorted(e.message for e in errors)
    assert any("'limit': the argument's schema refuses the value" in m for m in messages), messages
    assert any("'colour' is not an argument" in m for m in messages), messages
    assert any("'kind' is required" in m for m in messages), messages
