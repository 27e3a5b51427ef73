"""Storage: SQLAlchemy tables on one shared ``Base``, the database handle, and Alembic migrations.

Migrations live in ``store/migrations`` (shipped with the package) and run at start
(:func:`open_database`). Each area keeps its tables in a ``store/<area>_tables.py`` module.

The front ends hold a :class:`Database` and hand on its :class:`Session` (the transaction the registry's
and gateway's functions take); they never query with it (the ``api-runs-no-sql`` import contract).
"""

from sqlalchemy.orm import Session

from skillhouse.store.base import Base
from skillhouse.store.database import Database, open_database

__all__ = ["Base", "Database", "Session", "open_database"]
