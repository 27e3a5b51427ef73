"""The registry's views as the ``/v1`` skill and release bodies (:mod:`skillhouse.wire.skills`, shared with the client)."""

from __future__ import annotations

from skillhouse.registry.releases import ReleaseView
from skillhouse.registry.skills import VersionView
from skillhouse.wire.skills import CheckReport, ReleaseDocument, ReleaseOut, ReleaseSummary, VersionOut


def version_out(view: VersionView) -> VersionOut:
    return VersionOut(skill=view.skill, version=view.version, state=view.state, source=view.source,
                      builtin=view.builtin, content_digest=view.content_digest,
                      report=CheckReport.model_validate(view.report, from_attributes=True), created_at=view.created_at,
                      updated_at=view.updated_at, files=view.files)


def release_summary(view: ReleaseView) -> ReleaseSummary:
    return ReleaseSummary(skill=view.skill, version=view.version, digest=view.digest, builtin=view.builtin,
                          published_at=view.created_at)


def release_out(view: ReleaseView) -> ReleaseOut:
    return ReleaseOut(skill=view.skill, version=view.version, digest=view.digest, builtin=view.builtin,
                      published_at=view.created_at, document=ReleaseDocument.model_validate(view.document),
                      files=view.files)
