"""The declarative base every table of the store shares (one metadata, one Alembic chain)."""

from __future__ import annotations

from sqlalchemy.orm import DeclarativeBase


class Base(DeclarativeBase):
    pass
