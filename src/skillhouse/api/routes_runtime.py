"""``/api/runtime``: the source registry contract (tool specs, skill specs, publish, releases, execute).

Paths and payloads follow the source system; its gaps are closed: a tenant writes only its own
rows, built-ins (``github.primary``, ``resend.primary`` and their skills) are merged into listings
and shadowed per tenant, field rules are enforced with every problem at once (422), published
content is immutable (409), and the bundle hash is canonical (RFC 8785, SHA-256).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal
from urllib.parse import urlsplit

from fastapi import APIRouter, Path, Response
from pydantic import BaseModel, Field

from skillhouse.api.deps import AdminDep, DatabaseDep, RunDep, SessionDep
from skillhouse.api.errors import ApiError, error_responses
from skillhouse.api.gateway_deps import GatewayDep, gateway_responses
from skillhouse.api.guest_deps import GuestDep, require_guest
from skillhouse.gateway import Gateway
from skillhouse.gateway.connections import check_subject
from skillhouse.host.calls import run_call
from skillhouse.json_types import JsonObject, OperationDocument, ReleaseDocument
from skillhouse.registry import skill_specs, tool_specs
from skillhouse.registry.builtin_releases import capability_operation
from skillhouse.registry.errors import Invalid, problem
from skillhouse.registry.manifests import ExecuteRequest, resolve_manifest
from skillhouse.registry.releases import ReleaseView, get_release
from skillhouse.registry.specs import SkillSpec, SkillSpecUpsert, ToolSpec, ToolSpecUpsert
from skillhouse.wire.skills import CheckReport
from skillhouse.wire.turns import CallAnswer

router = APIRouter(prefix="/api/runtime", tags=["runtime"])

State = Literal["draft", "validated", "published", "deprecated"]
SkillId = Annotated[str, Path(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$", max_length=64)]
IntVersion = Annotated[int, Path(ge=1, le=2_147_483_647)]


class ToolSpecRecord(BaseModel):
    state: State
    source: Literal["tenant", "builtin"]
    tool_spec: ToolSpec
    created_at: dt.datetime | None
    updated_at: dt.datetime | None


class ToolSpecList(BaseModel):
    data: list[ToolSpecRecord]


class SkillSpecRecord(BaseModel):
    state: State
    source: Literal["tenant", "builtin"]
    skill_spec: SkillSpec
    report: CheckReport
    created_at: dt.datetime | None
    updated_at: dt.datetime | None


class SkillSpecList(BaseModel):
    data: list[SkillSpecRecord]


class SkillRelease(BaseModel):
    """An immutable release: the Agent Skills bundle, its canonical hash, and its compatibility report."""

    skill_id: str
    version: str
    bundle_hash: str = Field(description="sha256: over the RFC 8785 canonical JSON of the release document.")
    bundle: dict[str, str] = Field(description="The Agent Skills directory: file path to text.")
    compatibility: JsonObject
    document: ReleaseDocument = Field(description="The release document the hash covers.")
    source: Literal["tenant", "builtin"]
    published_at: dt.datetime | None


class ResolvedManifestOut(BaseModel):
    source: Literal["inline", "tenant", "builtin"]
    tool_id: str | None
    version: int | None
    manifest: JsonObject


def _tool_record(view: tool_specs.ToolSpecView) -> ToolSpecRecord:
    return ToolSpecRecord(state=view.state, source="builtin" if view.builtin else "tenant",
                          tool_spec=view.spec, created_at=view.created_at, updated_at=view.updated_at)


def _skill_record(view: skill_specs.SkillSpecView) -> SkillSpecRecord:
    return SkillSpecRecord(state=view.state, source="builtin" if view.builtin else "tenant",
                           skill_spec=view.spec, report=CheckReport.model_validate(view.report, from_attributes=True),
                           created_at=view.created_at, updated_at=view.updated_at)


def _release(view: ReleaseView) -> SkillRelease:
    return SkillRelease(skill_id=view.skill, version=view.version, bundle_hash=view.digest, bundle=view.files,
                        compatibility=view.document["compatibility"], document=view.document,
                        source="builtin" if view.builtin else "tenant", published_at=view.created_at)


@router.get("/skills/tool-specs", responses=error_responses())
def list_tool_specs(tenant: RunDep, session: SessionDep) -> ToolSpecList:
    """The tenant's tool specs and the built-ins it does not shadow."""
    return ToolSpecList(data=[_tool_record(v) for v in tool_specs.list_tool_specs(session, tenant.id)])


@router.post("/skills/tool-specs", status_code=201,
             responses={200: {"model": ToolSpecRecord, "description": "Updated."}, **error_responses(409)})
def upsert_tool_spec(body: ToolSpecUpsert, tenant: AdminDep, session: SessionDep, response: Response) -> ToolSpecRecord:
    """Create (201) or update (200) the tenant's tool spec ``(tool_id, version)``."""
    view, created = tool_specs.upsert_tool_spec(session, tenant.id, body)
    if not created:
        response.status_code = 200
    return _tool_record(view)


@router.get("/skills/skill-specs", responses=error_responses())
def list_skill_specs(tenant: RunDep, session: SessionDep) -> SkillSpecList:
    """The tenant's skill specs and the built-in skills it does not shadow."""
    return SkillSpecList(data=[_skill_record(v) for v in skill_specs.list_skill_specs(session, tenant.id)])


@router.post("/skills/skill-specs", status_code=201,
             responses={200: {"model": SkillSpecRecord, "description": "Updated."}, **error_responses(409)})
def upsert_skill_spec(body: SkillSpecUpsert, tenant: AdminDep, session: SessionDep, response: Response) -> SkillSpecRecord:
    """Create (201) or update (200) a skill spec in ``draft`` or ``validated``; deprecate a published one."""
    view, created = skill_specs.upsert_skill_spec(session, tenant.id, body)
    if not created:
        response.status_code = 200
    return _skill_record(view)


@router.post("/skills/skill-specs/{skill_id}/{version}/publish", status_code=201,
             responses={200: {"model": SkillRelease, "description": "Already published: the same release."},
                        **error_responses(404, 409)})
def publish_skill_spec(skill_id: SkillId, version: IntVersion, tenant: AdminDep, session: SessionDep,
                       response: Response) -> SkillRelease:
    """Compile a validated skill spec into an immutable release (201); publishing again answers it (200)."""
    release, created = skill_specs.publish_skill_spec(session, tenant.id, skill_id, version)
    if not created:
        response.status_code = 200
    return _release(release)


@router.get("/skills/releases/{skill_id}/{version}", responses=error_responses(404))
def read_release(skill_id: SkillId, version: IntVersion, tenant: RunDep, session: SessionDep) -> SkillRelease:
    return _release(get_release(session, tenant.id, skill_id, str(version)))


class ExecuteOut(BaseModel):
    """What ran: the resolved manifest, the operation, and exactly what the guest answered."""

    resolved: ResolvedManifestOut
    tool: str = Field(description="The operation's tool name (`github-coding_get_issue`).")
    result: CallAnswer


@router.post("/tools/execute", response_model_exclude_unset=True, responses=gateway_responses(501))
def execute_tool(body: ExecuteRequest, tenant: RunDep, database: DatabaseDep, gateway: GatewayDep,
                 guest: GuestDep) -> ExecuteOut:
    """Resolve the manifest (explicit ``manifest`` wins over ``manifest_ref``; its ``tool_pack`` must match)
    and run the capability's declared HTTP operation through the guest and the gateway.

    The call's answer is the guest's: the upstream response, a refusal of the arguments, or the
    gateway's refusal or signal (``approval-required``). ``secrets_ref`` names the stored credential
    binding the call relies on; it must exist and be bound to the operation's host. ``subject`` is the
    end user the call acts for, as a turn is bound with one. A capability with no declared operation
    answers 501.
    """
    if body.subject is not None:
        check_subject(body.subject)  # as a turn's: printable, no surrounding space
    with database.transaction() as session:
        resolved = resolve_manifest(session, tenant.id, body)
    manifest = resolved.manifest
    found = capability_operation(manifest.provider, body.operation)
    if found is None:
        raise ApiError(f"{manifest.provider} capability {body.operation} has no declared HTTP operation yet",
                       code="capability-not-declared")
    release, operation = found
    only: frozenset[str] | None = None
    if body.secrets_ref is not None:
        _check_secret(gateway, tenant.id, body.secrets_ref, str(operation["url"]))
        header = body.secrets_ref.partition("/")[2].lower()
        only = frozenset({header}) if header else None  # host/header: that binding alone
    arguments = {name: str(value) if name in _path_names(operation) and type(value) is int else value
                 for name, value in body.arguments.items()}
    require_guest(guest)
    answer = run_call(gateway, tenant.id, None, [release], operation["tool_name"], arguments, guest.kind,
                      guest.pool, credential_headers=only, subject=body.subject)
    out = ResolvedManifestOut(source=resolved.source, tool_id=resolved.tool_id,
                              version=resolved.version, manifest=manifest.model_dump())
    return ExecuteOut(resolved=out, tool=operation["tool_name"], result=CallAnswer.model_validate(answer))


def _path_names(operation: OperationDocument) -> set[str]:
    # path parameters are strings; an issue number given as a JSON integer is sent as its digits
    return {str(a["name"]) for a in operation.get("arguments", []) if a.get("in") == "path"}


def _check_secret(gateway: Gateway, tenant: str, ref: str, url: str) -> None:
    host, _, header = ref.partition("/")
    target = urlsplit(url.replace("{", "").replace("}", ""))
    authority = f"{target.hostname}:{target.port or (443 if target.scheme == 'https' else 80)}"
    if host.lower() not in (target.hostname, authority):
        raise Invalid("secret-host-mismatch", f"secrets_ref {ref} is not for {target.hostname}",
                      [problem("secrets_ref", "secret-host-mismatch", f"bind a credential to {target.hostname}")])
    scheme, port = target.scheme, target.port or (443 if target.scheme == "https" else 80)
    bound = [b for b in gateway.credentials.list(tenant)  # bound to the operation's origin, the only one it gets
             if (b.origin.scheme, b.host, b.origin.port) == (scheme, target.hostname, port) and header.lower() in ("", b.header)]
    if not bound:
        raise Invalid("unknown-secret", f"no credential bound as {ref}",
                      [problem("secrets_ref", "unknown-secret", "PUT /v1/credentials binds one (host, header)")])
