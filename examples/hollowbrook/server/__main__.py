"""Run the Hollowbrook guesthouse API: ``python examples/hollowbrook/server [--port 8084]``.

The server lives in the installed package (``skillhouse.examples.hollowbrook_server``) so tests,
the demo and ``skillhouse hollowbrook-server`` all start the same code; this is only a launcher.
"""

from skillhouse.examples.hollowbrook_server import main

raise SystemExit(main())
