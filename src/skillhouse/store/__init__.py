"""Storage: SQLAlchemy tables on one shared ``Base``, the database handle, and Alembic migrations.

Migrations live in ``store/migrations`` (shipped with the package) and run at start
(:func:`open_database`). Each area keeps its tables in a ``store/<area>_tables.py`` module.
"""

from skillhouse.store.base import Base
from skillhouse.store.database import Database, open_database

__all__ = ["Base", "Database", "open_database"]
