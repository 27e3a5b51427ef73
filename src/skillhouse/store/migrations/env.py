"""Alembic environment: runs migrations on the connection handed over by ``Database.migrate``.

Every ``skillhouse.store.*_tables`` module is imported so ``Base.metadata`` (the autogenerate
target) holds every table of every area without this file naming them.
"""

from __future__ import annotations

import importlib
import pkgutil

from alembic import context
from sqlalchemy import engine_from_config, pool

import skillhouse.store
from skillhouse.store.base import Base

for module in pkgutil.iter_modules(skillhouse.store.__path__):
    if module.name.endswith("_tables"):
        importlib.import_module(f"skillhouse.store.{module.name}")

config = context.config
target_metadata = Base.metadata


def run_migrations() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    # the plain ``alembic`` command line: sqlalchemy.url from the ini or -x
    engine = engine_from_config(config.get_section(config.config_ini_section) or {}, prefix="sqlalchemy.", poolclass=pool.NullPool)
    with engine.connect() as conn:
        context.configure(connection=conn, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()


run_migrations()
