"""An independent judge of translation: hypothesis draws arguments valid for each corpus tool's published
schema, the guest translates them (``build_request``, what a tool call runs) and openapi-core validates
the request against the ORIGINAL spec (tests/openapi/request_judge.py). A request the spec refuses is
a defect of the wizard or the guest, unless it is listed in :data:`KNOWN` with its reason.

The default run checks a deterministic sample of each spec's operations, a few draws each; ``make
fuzz`` (``SKILLHOUSE_FUZZ=long``) checks every operation with more draws.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from jsonschema import Draft202012Validator
from tests.openapi.request_judge import judge_of
from tests.openapi.schema_instances import valid_instances
from tests.openapi.specs import SPECS, import_of, spec_of

from skillhouse.guest import build_request
from skillhouse.openapi.shrink import CUT_NOTE

LONG = os.environ.get("SKILLHOUSE_FUZZ") == "long"
OPERATIONS_PER_SPEC = 0 if LONG else 10  # 0: every operation
EXAMPLES_PER_OPERATION = 12 if LONG else 3

# Requests refused for a reason that is not a defect of the wizard or the guest: (spec, tool name or "*" for
# every tool of the spec, a text the refusal holds) and why. Anything else refused fails the test.
KNOWN: dict[tuple[str, str, str], str] = {
    **{
        ("readme-3.0-parameters-style.json", f"support-for-parameter-serialization_paths_label_{kind}",
         "Missing required path parameter"): (
            "label path parameters: openapi-core 0.23 finds none of them, even in a well-formed request "
            "('/path/label/.5/.1.2/.a=1.b=2'); the guest writes their '.' (tests/guest/test_path_styles.py). Matrix "
            "parameters are judged: the judge files them under the names openapi-core looks up (request_judge.py)"
        )
        for kind in ("exploded", "nonExploded")
    },
    ("readme-3.0-parameters-style.json", "*", "('simple', 'object')"): (
        "simple-style object parameters (path and header): openapi-core 0.23 has no deserializer for them "
        "(ParameterValidationError ('simple', 'object') whatever the value)"
    ),
    ("readme-3.0-discriminators.json", "discriminator-support_patch_mapping-of-schema-names", "could not be resolved"): (
        "the spec's discriminator mapping names schemas by bare name ('OptionOneNoDisc'), which openapi-core 0.23 "
        "cannot resolve: every body is refused"
    ),
    ("openai.yaml", "*", ": b'"): (
        "multipart parts: openapi-core 0.23 reads a file part, and a JSON part, as bytes, which its 3.1 validator "
        "refuses as a string or an object: every such upload is refused whatever it holds"
    ),
    ("spotify.yaml", "*", "Value b'"): (
        "image/jpeg bodies: openapi-core 0.23 hands a body of a media type it does not parse to the validator as "
        "bytes, which the spec's type 'string' refuses whatever the bytes"
    ),
    ("jira-platform.json", "*", 'form-data; name="value"'): (
        "multipart/form-data bodies whose schema is not an object (addAttachment's string, setColumns' list): the "
        "spec names no parts, so openapi-core reads the parts into an object no such schema accepts; the wizard "
        "sends the value as the one part 'value' and says so ('multipart body has no listed fields; sent as one value')"
    ),
    ("jira-platform.json", "*", "Failed to cast value to object type"): (
        "query parameters that are lists of objects (getRecent's and searchProjects' properties): OpenAPI defines "
        "no query form for an object inside a list; the guest sends each as JSON text, which openapi-core cannot cast"
    ),
}


# A schema over the compiler's 24 KB cap is cut to fit (openapi/shrink.py): nested schemas become their bare
# types with CUT_NOTE, and the import reports it per operation. Such a tool's schema accepts bodies the spec
# does not, by design: its body refusals are this known limit (its path, query and headers are still judged).
CUT_REASON = "the tool's schema was cut to the 24 KB limit (reported); the model is told to read the API reference"


def _known(spec: str, tool: str, refusal: str, cut: bool = False) -> str | None:
    if cut and refusal.startswith("InvalidRequestBody"):
        return CUT_REASON
    for (name, which, text), reason in KNOWN.items():
        if name == spec and which in ("*", tool) and text in refusal:
            return reason
    return None


def _sample(operations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not OPERATIONS_PER_SPEC or len(operations) <= OPERATIONS_PER_SPEC:
        return operations
    step = len(operations) / OPERATIONS_PER_SPEC
    return [operations[int(i * step)] for i in range(OPERATIONS_PER_SPEC)]


def _refusals(operation: dict[str, Any], judge: Any) -> tuple[int, list[str]]:
    """How many schema-valid argument sets were judged, and why the spec refused any of their requests."""
    validator = Draft202012Validator(operation["schema"])
    judged = 0
    refused: list[str] = []

    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        database=None,
        derandomize=not LONG,  # the default run is the same run every time
        phases=[Phase.generate],  # one refusal is enough: it is reported with its request, not shrunk
        suppress_health_check=list(HealthCheck),
    )
    # strings honour their declared format (a date-time is drawn as one): the tool's schema publishes
    # ``format`` for the model to follow, the guest does not assert it (an annotation in Draft 2020-12)
    @given(valid_instances(operation["schema"], formats=True))
    def check(arguments: Any) -> None:
        nonlocal judged
        if refused or not validator.is_valid(arguments):
            return  # the builder missed: not a case for this property
        request = build_request(operation, arguments)
        request["headers"].setdefault("Authorization", "Bearer gateway-credential")  # the gateway's part
        judged += 1
        try:
            judge(request)
        except Exception as exc:
            reason = getattr(exc, "__cause__", None) or exc
            body = request["body"]
            refused.append(f"{type(exc).__name__}: {reason!s:.700} <- {request['method']} {request['url']:.300} {body!r:.300}")

    with contextlib.suppress(Unsatisfiable):
        check()
    return judged, refused


OPENAPI3 = [p for p in SPECS if "swagger2" not in p.name]


@pytest.mark.parametrize("path", OPENAPI3, ids=[p.name for p in OPENAPI3])
def test_fuzz_schema_valid_calls_translate_into_requests_the_original_spec_accepts(path: Path) -> None:
    spec = spec_of(path)
    assert spec.version != "2.0"
    result = import_of(path)
    assert result.compiled is not None
    judge = judge_of(spec.root)
    sample = _sample(result.compiled.document["operations"])
    failures: dict[str, list[str]] = {}
    unjudged = []
    for operation in sample:
        judged, refused = _refusals(operation, judge)
        if refused:
            failures[operation["tool_name"]] = refused
        elif not judged:
            unjudged.append(operation["tool_name"])
    cut = {op["tool_name"] for op in sample if CUT_NOTE in json.dumps(op["schema"])}
    unexpected = {tool: why for tool, why in failures.items() if _known(path.name, tool, why[0], tool in cut) is None}
    assert unexpected == {}
    # nearly every operation got a request judged, so the property is checked, not skipped
    assert len(unjudged) <= max(2, len(sample) // 20), unjudged  # schemas nothing satisfies (readme-3.1 quirks)


MATRIX_TOOLS = [f"support-for-parameter-serialization_paths_matrix_{kind}" for kind in ("exploded", "nonExploded")]


@pytest.mark.parametrize("tool", MATRIX_TOOLS)
def test_fuzz_matrix_path_parameters_translate_into_requests_the_original_spec_accepts(tool: str) -> None:
    # every sample, whatever OPERATIONS_PER_SPEC picks: lists and objects, exploded or not, judged by openapi-core
    (path,) = [p for p in SPECS if p.name == "readme-3.0-parameters-style.json"]
    result = import_of(path)
    assert result.compiled is not None
    (operation,) = [op for op in result.compiled.document["operations"] if op["tool_name"] == tool]
    judged, refused = _refusals(operation, judge_of(spec_of(path).root))
    assert judged > 0 and refused == []
