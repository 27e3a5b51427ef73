"""A gateway in its own process: sends one booking and prints the answer (killed by the test first).

Usage: ``python gateway_process.py DATABASE_URL UPSTREAM_PORT LEASE_SECONDS``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from skillhouse.compiler import compile_dir
from skillhouse.gateway import BoundReleases, Gateway, GatewayConfig, KeyPolicy, TurnContext
from skillhouse.gateway.exchange import FetchRequest
from skillhouse.store.database import open_database

BOOKING = {"arrival": "2030-05-01", "departure": "2030-05-03", "guest_name": "Ada", "room_id": 2}


def main() -> None:
    url, port, lease = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    compiled, _ = compile_dir(Path(__file__).resolve().parents[2] / "examples" / "hollowbrook")
    assert compiled is not None
    config = GatewayConfig(resolve={("hollowbrook.local", 8084): f"127.0.0.1:{port}"}, keys=KeyPolicy(lease_seconds=lease))
    gateway = Gateway(open_database(url), config)
    turn = TurnContext("tenant-a", "turn-1", BoundReleases([compiled.document]))
    request = FetchRequest("POST", "http://hollowbrook.local:8084/bookings", (("Content-Type", "application/json"),),
                           json.dumps(BOOKING, sort_keys=True))
    print(json.dumps(gateway.fetch(turn, request).document()), flush=True)


if __name__ == "__main__":
    main()
