"""Which integration manifest a tool execution uses: the explicit one, or the one a reference names.

Order: an explicit ``manifest`` wins over ``manifest_ref``; a reference names either a ``tool_id``
(optionally a version; the highest usable otherwise) or an ``integration_id``, resolved among the
tenant's usable tool specs first and then the built-ins it does not shadow. The resolved manifest's
``tool_pack`` must be the request's, it must be active, and it must offer the requested operation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from skillhouse.json_types import JsonObject
from skillhouse.registry.errors import Invalid, problem
from skillhouse.registry.specs import (
    CodingManifest,
    CommsManifest,
    IntegrationManifest,
    ToolId,
    ToolPack,
    Version,
)
from skillhouse.registry.tool_specs import find_integration, find_tool


class ManifestRef(BaseModel):
    """A manifest by reference: exactly one of ``tool_id`` (with optional ``version``) or ``integration_id``."""

    model_config = ConfigDict(extra="forbid")

    tool_id: ToolId | None = None
    version: Version | None = None
    integration_id: ToolId | None = None


class ExecuteRequest(BaseModel):
    """Body of ``POST /api/runtime/tools/execute``."""

    model_config = ConfigDict(extra="forbid")

    tool_pack: ToolPack
    operation: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$", description="A capability of the manifest (`get_issue`).")
    arguments: JsonObject = Field(default_factory=dict)
    manifest: IntegrationManifest | None = None
    manifest_ref: ManifestRef | None = None
    secrets_ref: str | None = Field(
        default=None, max_length=400, pattern=r"^[A-Za-z0-9.\-]+(:[0-9]{1,5})?(/[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,128})?$",
        description="A stored credential binding, `host` or `host/header` (`api.github.com/authorization`), "
                    "the gateway injects into the call; it must be bound to the operation's host.")
    subject: str | None = Field(
        default=None, min_length=1, max_length=255,
        description="The end user the call acts for: a call to an `oauth2-authorization-code` binding uses this "
                    "person's connection (`/v1/connections`), and answers `connection-required` without one.")


ManifestSource = Literal["inline", "tenant", "builtin"]


@dataclass(frozen=True)
class ResolvedManifest:
    """The manifest a call runs with and where it came from (``inline``, ``tenant``, ``builtin``)."""

    manifest: CodingManifest | CommsManifest
    source: ManifestSource
    tool_id: str | None
    version: int | None


def resolve_manifest(session: Any, tenant: str, request: ExecuteRequest) -> ResolvedManifest:
    """The manifest for ``request``; :class:`Invalid` with every problem and its path otherwise."""
    if request.manifest is not None:
        resolved = ResolvedManifest(request.manifest, "inline", None, None)
        at = "manifest"
    elif request.manifest_ref is not None:
        resolved = _by_reference(session, tenant, request.manifest_ref)
        at = "manifest_ref"
    else:
        raise Invalid("manifest-required", "give a manifest or a manifest_ref",
                      [problem("manifest_ref", "manifest-required", "name a tool_id or an integration_id")])
    problems = []
    manifest = resolved.manifest
    if manifest.tool_pack != request.tool_pack:
        problems.append(problem(f"{at}.tool_pack" if at == "manifest" else at, "tool-pack-mismatch",
                                f"the manifest is for {manifest.tool_pack}, the request for {request.tool_pack}"))
    if manifest.status != "active":
        problems.append(problem(at, "integration-disabled", f"integration {manifest.integration_id} is {manifest.status}"))
    if request.operation not in manifest.capabilities:
        problems.append(problem("operation", "unknown-capability",
                                f"{manifest.integration_id} offers {', '.join(manifest.capabilities)}"))
    if problems:
        raise Invalid("manifest-unusable", "the manifest cannot run this call; see problems", problems)
    return resolved


def _by_reference(session: Any, tenant: str, ref: ManifestRef) -> ResolvedManifest:
    if (ref.tool_id is None) == (ref.integration_id is None):
        raise Invalid("invalid-manifest-ref", "a manifest_ref names exactly one of tool_id and integration_id",
                      [problem("manifest_ref", "invalid-manifest-ref", "give tool_id (and optionally version) or integration_id")])
    if ref.integration_id is not None and ref.version is not None:
        raise Invalid("invalid-manifest-ref", "version goes with tool_id, not integration_id",
                      [problem("manifest_ref.version", "invalid-manifest-ref", "remove version or use tool_id")])
    if ref.tool_id is not None:
        found = find_tool(session, tenant, ref.tool_id, ref.version)
        if found is None:
            raise Invalid("unknown-tool", f"no usable tool spec {ref.tool_id}",
                          [problem("manifest_ref.tool_id", "unknown-tool", "no validated or published tool spec with this id and version")])
    else:
        assert ref.integration_id is not None
        found = find_integration(session, tenant, ref.integration_id)
        if found is None:
            raise Invalid("unknown-integration", f"no usable tool spec with integration {ref.integration_id}",
                          [problem("manifest_ref.integration_id", "unknown-integration", "no validated or published tool spec has this integration")])
    spec, source = found
    return ResolvedManifest(spec.integration_manifest, source, spec.tool_id, spec.version)
