"""Token scopes, in a module of their own so the CLI can name them without loading the store."""

from __future__ import annotations

from typing import Literal

Scope = Literal["run", "approve", "admin"]
SCOPES: tuple[Scope, ...] = ("run", "approve", "admin")
"""Least to most: each scope includes every scope before it."""
DEFAULT_SCOPE: Scope = "run"
