"""Property tests: the guest's validator agrees with jsonschema (Draft 2020-12) on the schema subset."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from skillhouse.guest import validate

from .strategies import instance_of, json_values, schemas


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_validator_agrees_with_jsonschema_on_generated_schemas_and_instances(data: st.DataObject) -> None:
    schema = data.draw(schemas, label="schema")
    instance = data.draw(instance_of(schema) | json_values, label="instance")
    expected = Draft202012Validator(schema).is_valid(instance)
    event("valid" if expected else "invalid")
    violations = validate(schema, instance)
    assert (not violations) == expected, violations


@given(schemas, json_values)
@settings(max_examples=200, deadline=None)
def test_every_violation_has_a_json_path_a_problem_and_an_expectation(
    schema: dict[str, Any], instance: Any
) -> None:
    for violation in validate(schema, instance):
        assert violation.path.startswith("$")
        assert violation.problem and violation.expected
