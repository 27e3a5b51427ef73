"""``python -m skillhouse.cli``: the ``skillhouse`` command."""

from skillhouse.cli import console

console()
