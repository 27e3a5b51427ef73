"""Paging and filter links for console pages: which cursor a request asks for, and the query strings
of the links beside a page (its filters kept, the cursor replaced)."""

from __future__ import annotations

from urllib.parse import urlencode

from skillhouse.gateway.audit_queries import Direction


def direction_of(before: str, after: str) -> tuple[str, Direction]:
    """``?before=X`` asks for the rows older than X (the next page), ``?after=X`` for those newer (the previous)."""
    return (after, "newer") if after and not before else (before, "older")


def query_string(**values: str | None) -> str:
    """The non-empty ``values`` as a query string (no leading ``?``), in the order given."""
    return urlencode({name: value for name, value in values.items() if value})
