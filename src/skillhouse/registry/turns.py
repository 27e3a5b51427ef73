"""Turns: binding published skill versions for one tenant, recording the binding, reading it back.

:func:`bind_turn` reads each ``(skill, version)`` release the tenant sees (its own published
releases, or the built-ins it does not shadow), records a ``TurnRow`` naming each release by digest,
and answers the turn with its tools in a provider profile's wire format. :func:`load_turn` reads a
turn back for its tenant only (another tenant's turn is "not found") with the very release
documents it bound: by digest, so a release published later under the same name changes nothing.
Running a call is :func:`skillhouse.host.calls.run_call`; the API and the MCP command share both.
"""

from __future__ import annotations

import difflib
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from skillhouse.compiler import neutral_tool
from skillhouse.compiler.eager_tools import EAGER_TOOLS
from skillhouse.compiler.profiles import PROFILES, ProfileName, adapt, provider_tools
from skillhouse.json_types import JsonObject, ProviderTool, ReleaseDocument, one_of
from skillhouse.registry.builtins import builtin_skill
from skillhouse.registry.errors import Invalid, NotFound, RegistryError, problem
from skillhouse.registry.releases import builtin_release, get_release
from skillhouse.store.gateway_tables import TurnRow
from skillhouse.store.registry_tables import ReleaseRow
from skillhouse.wire.turns import MAX_SKILLS

OFFERED_EAGER = ("read_object",)
"""The guest's own tools offered with the operations (``load_tools`` is pointless when all are listed)."""


@dataclass(frozen=True)
class Turn:
    """A bound turn: who it acts for, the release documents it bound, its provider profile."""

    id: str
    tenant: str
    profile: ProfileName
    releases: list[ReleaseDocument]
    created_at: float
    subject: str | None = None
    """The end user the turn acts for: calls to an ``oauth2-authorization-code`` binding use their connection."""

    def bound(self) -> list[dict[str, str]]:
        """Each bound release as ``{skill, version, digest}``."""
        return [{"skill": r["skill"], "version": r["version"], "digest": r["digest"]} for r in self.releases]

    def tools(self) -> list[ProviderTool]:
        """The turn's tools in its profile's wire format (operations a profile refuses are left out)."""
        operations = [neutral_tool(op) for release in self.releases for op in release.get("operations", [])]
        eager = [
            {"name": t["name"], "description": t["description"], "parameters": t["parameters"]}
            for t in EAGER_TOOLS if t["name"] in OFFERED_EAGER
        ]
        return provider_tools([*operations, *eager], self.profile)

    def offered_names(self) -> frozenset[str]:
        """The names of the tools :meth:`tools` offers: the only ones a call may name."""
        operations = [neutral_tool(op) for release in self.releases for op in release.get("operations", [])]
        eager = [t for t in EAGER_TOOLS if t["name"] in OFFERED_EAGER]
        return frozenset(str(t["name"]) for t in [*operations, *eager] if adapt(t, self.profile).tool is not None)

    def check_offered(self, tool: str) -> None:
        """Refuse a call of a tool this turn does not offer (``fetch_url``, ``load_tools``, a short name,
        an operation its profile refuses): the turn's tools are all a caller may use."""
        offered = self.offered_names()
        if tool not in offered:
            nearest = difflib.get_close_matches(tool, sorted(offered), n=3, cutoff=0.5)
            expected = "one of the turn's tools" + (f", such as {', '.join(nearest)}" if nearest else "")
            raise Invalid("tool-not-offered", f"the turn does not offer a tool {tool!r}",
                          [problem("tool", "tool-not-offered", expected)])  # fmt: skip


def bind_turn(session: Session, tenant: str, skills: Sequence[tuple[str, str]], profile: str,
              subject: str | None = None) -> Turn:  # fmt: skip
    """Bind ``skills`` (``(name, version)`` pairs) for ``tenant`` and record the turn, acting for ``subject``
    (the end user whose OAuth connections its calls use; ``None``: nobody in particular).

    Every problem is reported at once (:class:`Invalid` with each pair's path): an unknown profile,
    no skills, a skill named twice, a version that has no release this tenant sees.
    """
    problems = []
    if profile not in PROFILES:
        problems.append(problem("profile", "unknown-profile", f"one of {', '.join(PROFILES)}"))
    if not skills:
        problems.append(problem("skills", "no-skills", "bind at least one skill version"))
    if len(skills) > MAX_SKILLS:
        problems.append(problem("skills", "too-many-skills", f"a turn binds at most {MAX_SKILLS} skill versions"))
    releases: list[ReleaseDocument] = []
    seen: set[str] = set()
    for index, (skill, version) in enumerate(skills):
        if skill in seen:
            problems.append(problem(f"skills.{index}.name", "duplicate-skill", f"{skill} is bound twice; bind one version"))
            continue
        seen.add(skill)
        try:
            releases.append(get_release(session, tenant, skill, version, with_files=False).document)
        except RegistryError:
            problems.append(problem(f"skills.{index}", "unknown-release", f"no published release {skill} {version}"))
    if subject is not None and (not subject or len(subject) > 255 or not subject.isprintable() or subject != subject.strip()):
        problems.append(problem("subject", "invalid-subject", "1 to 255 printable characters, no surrounding space"))
    if problems:
        raise Invalid("invalid-turn", "the turn cannot be bound; see problems", problems)
    turn = Turn("turn_" + secrets.token_hex(12), tenant, one_of(profile, PROFILES, "profile"), releases, time.time(),
                subject)
    session.add(TurnRow(id=turn.id, tenant_id=tenant, profile=profile, releases=turn.bound(), created_at=turn.created_at,
                        subject=subject))
    session.flush()
    return turn


def load_turn(session: Session, tenant: str, turn_id: str) -> Turn:
    """The turn ``turn_id`` of ``tenant``, with the documents of exactly the releases it bound."""
    row = session.get(TurnRow, turn_id) if len(turn_id) <= 40 else None
    if row is None or row.tenant_id != tenant:
        raise NotFound("not-found", f"no turn {turn_id}")
    documents = [_bound_document(session, tenant, dict(entry)) for entry in row.releases]
    return Turn(row.id, row.tenant_id, one_of(row.profile, PROFILES, "profile"), documents, row.created_at, row.subject)


def _bound_document(session: Session, tenant: str, entry: JsonObject) -> ReleaseDocument:
    skill, version, digest = str(entry["skill"]), str(entry["version"]), str(entry["digest"])
    query = select(ReleaseRow).where(ReleaseRow.tenant_id == tenant, ReleaseRow.skill == skill, ReleaseRow.digest == digest)
    if session.scalars(query.where(ReleaseRow.version == version)).first() is not None:
        return get_release(session, tenant, skill, version, with_files=False).document
    spec = builtin_skill(skill)
    if spec is not None and str(spec.version) == version and builtin_release(skill).digest == digest:
        return builtin_release(skill).document
    return _missing(skill, version)


def _missing(skill: str, version: str) -> ReleaseDocument:
    # releases are immutable, so this means the store lost a row: say so rather than bind something else
    raise NotFound("release-gone", f"the release {skill} {version} this turn bound is no longer in the store")
