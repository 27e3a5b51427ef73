"""The values that cross a layer boundary are typed, and stay so.

Compiler to registry and store, registry to the front ends, gateway to host, host to the API, guest to
host, the audit trail to the console: what crosses is a frozen dataclass, a ``Literal`` vocabulary, or
(where the value is JSON by contract: release documents, tool definitions, what the guest and the host
say across the component boundary) one of the names in :mod:`skillhouse.json_types`. A ``fetch_url``
request and its answer are JSON between guest and host and typed between host and gateway: the host
reads the JSON in one place and writes it in one place (``host/turn.py``). The annotations are read as written (every module uses postponed
annotations), so a signature that falls back to ``dict[str, Any]`` fails here even though the names
are the same type at run time. The routes carry no ``type: ignore``.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import pytest

from skillhouse import json_types, records
from skillhouse.api.console import routes_approvals, routes_audit
from skillhouse.api.routes_guest import GuestOut
from skillhouse.api.routes_runtime import ResolvedManifestOut, SkillSpecRecord, ToolSpecRecord
from skillhouse.compiler import CompiledSkill, OperationDecl, compile_package, neutral_tool, profiles
from skillhouse.compiler.model import Argument
from skillhouse.compiler.profiles import PROFILES, ProfileName, provider_tools
from skillhouse.gateway import Gateway, TurnContext
from skillhouse.gateway.audit_queries import (
    AuditRecord,
    BoundRelease,
    TurnRecord,
    audit_page,
    audit_rows,
    turn_record,
)
from skillhouse.gateway.canonical import CanonicalRequest
from skillhouse.gateway.connections import ConnectionBroker, Started
from skillhouse.gateway.credentials import ALL_SCHEMES, Binding, CredentialScheme
from skillhouse.gateway.errors import InvalidRequest
from skillhouse.gateway.exchange import (
    FetchRefusal,
    FetchRequest,
    FetchResponse,
    UnreadRequest,
    read_answer,
    read_request,
    refusal,
    replayed,
)
from skillhouse.gateway.idempotency import KeyRow, Replay
from skillhouse.gateway.matching import BoundOperation, Match
from skillhouse.gateway.redaction import Redactor
from skillhouse.guest.translation import build_request, translate
from skillhouse.host.calls import run_agent, run_call
from skillhouse.host.guest_state import GuestPhase, GuestStatus
from skillhouse.host.runner import RUNNER_KINDS, RunnerKind
from skillhouse.host.turn import Fetch, TurnHost
from skillhouse.registry.builtin_releases import ReleaseView, compile_files
from skillhouse.registry.manifests import ManifestSource, ResolvedManifest
from skillhouse.registry.releases import get_release, list_releases, publish_version, release_tools
from skillhouse.registry.skill_specs import SkillSpecView
from skillhouse.registry.skills import CheckResult, VersionSource, VersionView
from skillhouse.registry.specs import STATES, State
from skillhouse.registry.tool_specs import ToolSpecView
from skillhouse.registry.turns import Turn, bind_turn, load_turn
from skillhouse.store.gateway_tables import AuditRow
from skillhouse.wire.credentials import BindingOut
from skillhouse.wire.skills import Profile, VersionOut

SRC = Path(__file__).resolve().parents[1] / "src" / "skillhouse"

BOUNDARY_SIGNATURES: list[tuple[Callable[..., Any], dict[str, str]]] = [
    # compiler -> registry, store, export and the CLI
    (compile_package, {"return": "tuple[CompiledSkill | None, list[SkillError]]"}),
    (neutral_tool, {"op": "OperationDecl | OperationDocument", "return": "ToolDefinition"}),
    (provider_tools, {"tools": "Sequence[ToolDefinition]", "eager": "Sequence[ToolDefinition]",
                      "profile": "str", "return": "list[ProviderTool]"}),
    # registry -> API, MCP and host
    (compile_files, {"return": "ReleaseDocument"}),
    (publish_version, {"return": "tuple[ReleaseView, bool]"}),
    (get_release, {"return": "ReleaseView"}),
    (list_releases, {"return": "list[ReleaseView]"}),
    (release_tools, {"release": "ReleaseView", "return": "list[ToolDefinition]"}),
    (bind_turn, {"return": "Turn"}),
    (load_turn, {"return": "Turn"}),
    (Turn.tools, {"return": "list[ProviderTool]"}),
    # gateway -> host
    (Gateway.fetch, {"turn": "TurnContext", "request": "FetchRequest | UnreadRequest", "return": "FetchAnswer"}),
    (Redactor.answer, {"return": "FetchAnswer"}),
    (read_request, {"value": "object", "return": "FetchRequest | UnreadRequest"}),
    # gateway -> console: the audit trail as a person reads it
    (audit_rows, {"return": "list[AuditRecord]"}),
    (audit_page, {"return": "Page[AuditRecord]"}),
    (turn_record, {"return": "TurnRecord | None"}),
    # gateway -> API, console and CLI: a person's connection, started in one place
    (ConnectionBroker.start, {"return": "Started"}),
    # host -> API and MCP
    (run_call, {"releases": "Sequence[ReleaseDocument]", "arguments": "JsonObject", "return": "ToolAnswer"}),
    (run_agent, {"releases": "Sequence[ReleaseDocument]", "request": "JsonObject",
                 "complete": "Callable[[ModelRequest], ModelAnswer]", "return": "JsonObject"}),
    (TurnHost.__init__, {"fetch": "Fetch", "complete": "Complete | None"}),
    # guest -> host: what the guest hands to fetch_url
    (build_request, {"operation": "OperationDocument", "return": "FetchRequest"}),
    (translate, {"operation": "OperationDocument", "arguments": "JsonObject", "return": "FetchRequest"}),
]

FROZEN_VALUES = [
    CompiledSkill, OperationDecl, Argument,  # compiler
    ReleaseView, Turn, VersionView, ToolSpecView, SkillSpecView, ResolvedManifest, CheckResult,  # registry
    TurnContext, CanonicalRequest, Binding, BoundOperation, Match, Started,  # gateway
    FetchRequest, UnreadRequest, FetchResponse, FetchRefusal, Replay, KeyRow,  # gateway <-> host
    AuditRecord, TurnRecord, BoundRelease,  # gateway -> console
    GuestStatus,  # host
]

# (the dataclass, its field, the Literal the layer owns)
VOCABULARIES = [
    (Turn, "profile", ProfileName),
    (VersionView, "state", State),
    (VersionView, "source", VersionSource),
    (ToolSpecView, "state", State),
    (SkillSpecView, "state", State),
    (ResolvedManifest, "source", ManifestSource),
    (Binding, "scheme", CredentialScheme),
    (GuestStatus, "kind", RunnerKind),
    (GuestStatus, "state", GuestPhase),
]

# (the API model, its field, the Literal of the layer the value comes from): mypy checks that every
# value of the layer's vocabulary is one the model accepts; this checks the model offers no other
API_VOCABULARIES = [
    (VersionOut, "state", State),
    (VersionOut, "source", VersionSource),
    (ToolSpecRecord, "state", State),
    (SkillSpecRecord, "state", State),
    (ResolvedManifestOut, "source", ManifestSource),
    (BindingOut, "scheme", CredentialScheme),
    (GuestOut, "kind", RunnerKind),
    (GuestOut, "state", GuestPhase),
]


def _name(function: Callable[..., Any]) -> str:
    return f"{function.__module__}.{function.__qualname__}"


@pytest.mark.parametrize(("function", "expected"), BOUNDARY_SIGNATURES, ids=[_name(f) for f, _ in BOUNDARY_SIGNATURES])
def test_boundary_functions_are_annotated_with_the_typed_values(function: Callable[..., Any], expected: dict[str, str]) -> None:
    written = {name: function.__annotations__.get(name) for name in expected}
    assert written == expected
    # and every name in them resolves: the modules on the library's import path import typing and
    # json_types under TYPE_CHECKING (neither is loaded by `import skillhouse.openapi`), so those are given
    typing.get_type_hints(function, localns=vars(json_types))


@pytest.mark.parametrize("value", FROZEN_VALUES, ids=[v.__qualname__ for v in FROZEN_VALUES])
def test_values_crossing_a_boundary_are_frozen_dataclasses(value: type) -> None:
    # frozen dataclasses, or frozen records on the library's import path (skillhouse.records)
    if records.is_frozen(value):
        return
    assert dataclasses.is_dataclass(value)
    assert value.__dataclass_params__.frozen


@pytest.mark.parametrize(("value", "field", "vocabulary"), VOCABULARIES,
                         ids=[f"{v.__qualname__}.{f}" for v, f, _ in VOCABULARIES])
def test_states_kinds_and_sources_are_typed_by_their_vocabulary(value: type, field: str, vocabulary: object) -> None:
    assert typing.get_type_hints(value)[field] == vocabulary


@pytest.mark.parametrize(("model", "field", "vocabulary"), API_VOCABULARIES,
                         ids=[f"{m.__qualname__}.{f}" for m, f, _ in API_VOCABULARIES])
def test_api_models_offer_exactly_the_vocabulary_of_the_layer_below(model: Any, field: str, vocabulary: object) -> None:
    assert set(get_args(model.model_fields[field].annotation)) == set(get_args(vocabulary))


def test_the_vocabulary_tuples_are_their_literals() -> None:
    assert (
        get_args(ProfileName), get_args(State), get_args(CredentialScheme), get_args(RunnerKind)
    ) == (PROFILES, STATES, ALL_SCHEMES, RUNNER_KINDS)
    assert Profile is ProfileName


def test_the_profile_names_type_checkers_see_are_the_profiles() -> None:
    # ProfileName is spelled out for type checkers only (the library's import path does without typing) and
    # made from PROFILES at run time, so the check above cannot see the two lists part
    source = ast.parse((SRC / "compiler" / "profiles" / "__init__.py").read_text(encoding="utf-8"))
    spelled = [node.value for node in ast.walk(source)
               if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["ProfileName"]]
    assert len(spelled) == 1 and isinstance(spelled[0], ast.Subscript)
    assert ast.literal_eval(spelled[0].slice) == PROFILES
    with pytest.raises(AttributeError):
        profiles.ProfileNames  # noqa: B018 - only ProfileName is made on demand


def _ignores(root: Path) -> list[str]:
    return [f"{path.relative_to(SRC)}:{number}: {line.strip()}"
            for path in sorted(root.rglob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if re.search(r"#\s*type:\s*ignore", line)]


def test_the_routes_carry_no_type_ignore() -> None:
    assert _ignores(SRC / "api") == []


def test_a_type_ignore_left_in_src_says_why() -> None:
    # one that must stay names its error code and gives its reason in a comment after it
    unexplained = [line for line in _ignores(SRC) if not re.search(r"type:\s*ignore\[[a-z-]+(, *[a-z-]+)*\]\s*#\s*\S", line)]
    assert unexplained == []



def test_the_host_hands_the_gateway_typed_values_and_never_its_json() -> None:
    # Fetch is the callable a TurnHost is given: typed on both sides, so the JSON stays in TurnHost.fetch_url
    assert get_args(typing.get_type_hints(TurnHost.__init__)["fetch"]) == get_args(Fetch)
    assert get_args(Fetch)[0] == [FetchRequest | UnreadRequest]
    assert set(get_args(get_args(Fetch)[1])) == {FetchResponse, FetchRefusal}


def test_json_is_read_and_written_at_one_place_between_host_and_gateway() -> None:
    # read_request, read_answer and document() are the conversions; outside the gateway's own modules and
    # the host's turn, no module of src calls them
    allowed = {"gateway/exchange.py", "gateway/idempotency.py", "host/turn.py"}
    callers = sorted(
        path.relative_to(SRC).as_posix() for path in SRC.rglob("*.py")
        if re.search(r"\bread_request\(|\bread_answer\(", path.read_text(encoding="utf-8"))
    )
    assert set(callers) <= allowed and "host/turn.py" in callers


def test_a_fetch_value_round_trips_through_its_json_exactly() -> None:
    request = {"method": "POST", "url": "https://a.example/x", "headers": {"B": "2", "A": "1"}, "body": "{}"}
    read = read_request(request)
    assert isinstance(read, FetchRequest) and read.document() == request
    assert list(read.document()["headers"]) == ["B", "A"]  # the guest's order is kept
    for answer in ({"status": 201, "headers": {"x": "1"}, "body": "ok"},
                   {"status": 200, "headers": {}, "body": "", "replayed": True},
                   {"error": {"code": "approval-required", "message": "held", "approval_id": "apr_1"}},
                   {"error": {"code": "response-withheld", "message": "m", "status": 200}, "replayed": True}):
        assert read_answer(answer).document() == answer
    assert replayed(read_answer({"status": 201, "headers": {}, "body": ""})).document()["replayed"] is True


@pytest.mark.parametrize(("value", "field"), [
    ([], "request"), ({"method": 7, "url": "u"}, "method"), ({"method": "TRACE", "headers": 1}, "method"),
    ({"method": "GET", "url": ""}, "url"), ({"method": "GET", "url": "u", "headers": {"a": 1}}, "headers"),
    ({"method": "GET", "url": "u", "body": 7}, "body"),
])
def test_json_that_is_no_request_is_read_as_an_unread_request_saying_where(value: object, field: str) -> None:
    read = read_request(value)
    assert isinstance(read, UnreadRequest) and read.field == field


def test_a_refusal_answers_the_errors_own_document() -> None:
    error = InvalidRequest("bad", field="headers", reason="too-many")
    assert refusal(error).document() == error.document()


def test_the_console_hands_its_templates_typed_audit_rows() -> None:
    assert [f.name for f in dataclasses.fields(AuditRecord)] == [c.name for c in AuditRow.__table__.columns]
    for module in (routes_audit, routes_approvals):  # no row read as a dict on the way to the template
        assert not re.search(r"\brow\[\"", Path(typing.cast(str, module.__file__)).read_text(encoding="utf-8"))
