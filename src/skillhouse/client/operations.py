"""The client's operations as plans: generators that yield the :class:`~skillhouse.client.exchange.Exchange`\\ s
to run and are handed back each one's answer. Both clients run the same plans, so what an operation sends
and how it reads the answers is written once, here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import quote, urlsplit

import httpx

from skillhouse.client.errors import RequestRefused, error_for
from skillhouse.client.exchange import Exchange, Plan, model, nothing
from skillhouse.json_types import JsonObject, ProviderTool
from skillhouse.skill import package_files, read_package_dir
from skillhouse.wire.approvals import ApprovalList, ApprovalOut, DenyIn, State
from skillhouse.wire.credentials import BindingList, BindingOut, CredentialPut
from skillhouse.wire.skills import FilesUpload, Profile, ReleaseOut, ToolsOut, VersionOut
from skillhouse.wire.turns import CallAnswer, CallIn, RunIn, RunOut, SkillRef, TurnCreate, TurnOut

SkillSpec = str | tuple[str, str] | SkillRef
"""A skill version to bind: ``"hollowbrook@1.0.0"``, ``("hollowbrook", "1.0.0")`` or a :class:`SkillRef`."""


def _segment(value: str) -> str:
    return quote(value, safe="")


def _version_path(skill: str, version: str) -> str:
    return f"/v1/skills/{_segment(skill)}/versions/{_segment(version)}"


def read_directory(path: str | Path, version: str | None = None) -> tuple[str, str, dict[str, str]]:
    """The skill's name, its version (``version``, else SKILL.md's ``metadata.version``) and the files a
    release is made of, from the package in directory ``path``."""
    package, _ = read_package_dir(path)  # the server reports every problem of the package when it checks it
    if package.manifest is None:
        raise RequestRefused(f"{path}: no readable SKILL.md; a skill package directory has one", code="invalid-skill")
    chosen = version or package.manifest.metadata.get("version")
    if not chosen:
        raise RequestRefused(f"{path}/SKILL.md has no metadata.version; give the version", code="invalid-skill")
    files = {name: data.decode("utf-8", errors="replace") for name, data in package_files(path).items()}
    return package.manifest.name, chosen, files


def upload(skill: str, version: str, files: Mapping[str, str]) -> Plan[VersionOut]:
    stored: VersionOut = yield Exchange("PUT", _version_path(skill, version), model(VersionOut),
                                        json=FilesUpload(files=dict(files)))
    return stored


def publish(package: str | Path, version: str | None, files: Mapping[str, str] | None) -> Plan[ReleaseOut]:
    """Upload the files as a draft, validate it (unless identical content is already published) and publish:
    the release, the same one when it was published before. ``package`` is the skill's directory, or its name
    when ``files`` are given."""
    if files is None:
        skill, version, files = read_directory(package, version)
    else:
        skill = str(package)
        if not version:
            raise RequestRefused(f"give the version of {skill} to publish with its files", code="invalid-request")
    stored: VersionOut = yield from upload(skill, version, files)
    base = _version_path(skill, version)
    if stored.state == "draft":
        yield Exchange("POST", f"{base}/validate", model(VersionOut))
    # publishing again answers the same release, so a lost answer may be asked again
    release: ReleaseOut = yield Exchange("POST", f"{base}/publish", model(ReleaseOut), replayable=True)
    return release


def release(skill: str, version: str) -> Plan[ReleaseOut]:
    found: ReleaseOut = yield Exchange("GET", f"/v1/skills/{_segment(skill)}/releases/{_segment(version)}",
                                       model(ReleaseOut))
    return found


def release_tools(skill: str, version: str, profile: Profile | None) -> Plan[list[ProviderTool]]:
    path = f"/v1/skills/{_segment(skill)}/releases/{_segment(version)}/tools"
    found: ToolsOut = yield Exchange("GET", path, model(ToolsOut), params={"profile": profile} if profile else {})
    return found.tools


def _skill_ref(spec: SkillSpec) -> SkillRef:
    if isinstance(spec, SkillRef):
        return spec
    name, version = spec if isinstance(spec, tuple) else spec.partition("@")[::2]
    return SkillRef(name=name, version=version)


def bind(skills: Sequence[SkillSpec], profile: Profile) -> Plan[TurnOut]:
    body = TurnCreate(skills=[_skill_ref(s) for s in skills], profile=profile)
    turn: TurnOut = yield Exchange("POST", "/v1/turns", model(TurnOut), json=body)
    return turn


def turn(turn_id: str) -> Plan[TurnOut]:
    found: TurnOut = yield Exchange("GET", f"/v1/turns/{_segment(turn_id)}", model(TurnOut))
    return found


def _checked(response: httpx.Response) -> CallAnswer:
    answer = CallAnswer.model_validate_json(response.content)
    if answer.error is not None:
        raise error_for(answer.error.model_dump(), None)
    return answer


def tools(turn_id: str) -> Plan[list[ProviderTool]]:
    found: TurnOut = yield from turn(turn_id)
    return found.tools


def call(turn_id: str, tool: str, arguments: JsonObject, *, check: bool, replayable: bool) -> Plan[CallAnswer]:
    """One tool call; with ``check``, an ``error`` answer (a refusal, a signal) is raised as its class."""
    exchange = Exchange("POST", f"/v1/turns/{_segment(turn_id)}/calls", _checked if check else model(CallAnswer),
                        json=CallIn(tool=tool, arguments=arguments), replayable=replayable)
    answer: CallAnswer = yield exchange
    return answer


def run(turn_id: str, body: RunIn) -> Plan[RunOut]:
    transcript: RunOut = yield Exchange("POST", f"/v1/turns/{_segment(turn_id)}/run", model(RunOut), json=body)
    return transcript


def approvals(state: State | None, limit: int) -> Plan[list[ApprovalOut]]:
    params = {"limit": str(limit), **({"state": state} if state else {})}
    found: ApprovalList = yield Exchange("GET", "/v1/approvals", model(ApprovalList), params=params)
    return found.data


def approval(approval_id: str) -> Plan[ApprovalOut]:
    found: ApprovalOut = yield Exchange("GET", f"/v1/approvals/{_segment(approval_id)}", model(ApprovalOut))
    return found


def decide(approval_id: str, approve: bool, reason: str | None = None) -> Plan[ApprovalOut]:
    path = f"/v1/approvals/{_segment(approval_id)}/{'approve' if approve else 'deny'}"
    body = None if approve else DenyIn(reason=reason)
    decided: ApprovalOut = yield Exchange("POST", path, model(ApprovalOut), json=body)
    return decided


def bind_credential(body: CredentialPut) -> Plan[BindingOut]:
    bound: BindingOut = yield Exchange("PUT", "/v1/credentials", model(BindingOut), json=body)
    return bound


def credentials() -> Plan[list[BindingOut]]:
    found: BindingList = yield Exchange("GET", "/v1/credentials", model(BindingList))
    return found.data


def delete_credential(origin: str, header: str) -> Plan[None]:
    """Remove the binding of ``origin`` (``https://host[:port]``, or a bare host for https) and ``header``."""
    parts = urlsplit(origin if "://" in origin else f"https://{origin}")
    path = f"/v1/credentials/{_segment(parts.netloc)}/{_segment(header)}"
    yield Exchange("DELETE", path, nothing, params={"origin_scheme": parts.scheme})
