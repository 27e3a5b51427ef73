"""The one error body every error answer of the HTTP API has: ``{"error": {"code", "message", "problems"}}``."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Problem(BaseModel):
    """One thing wrong with a request: a field (``path``) or a line of a skill package file."""

    code: str = Field(description="Stable code to match on.")
    message: str = Field(description="What is wrong and what to do about it.")
    path: str | None = Field(default=None, description="Dotted path of the request field (`tool_spec.version`).")
    file: str | None = Field(default=None, description="Skill package file the problem is in.")
    line: int | None = Field(default=None, description="1-based line in `file`.")


class ErrorDetail(BaseModel):
    code: str = Field(description="Stable error code (`not-found`, `release-conflict`, `invalid-request`, ...).")
    message: str
    problems: list[Problem] = Field(default_factory=list, description="Every problem found, all at once.")


class ErrorBody(BaseModel):
    """The body of every error response."""

    error: ErrorDetail
