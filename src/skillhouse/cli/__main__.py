"""``python -m skillhouse.cli``: the ``skillhouse`` command."""

from skillhouse.cli import main

main()
