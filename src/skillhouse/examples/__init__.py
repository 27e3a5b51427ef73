"""Upstream services the example skills describe, runnable for demos and tests."""

from skillhouse.examples.hollowbrook_house import Guesthouse, HouseError, Room
from skillhouse.examples.hollowbrook_server import HollowbrookHTTPServer

__all__ = ["Guesthouse", "HollowbrookHTTPServer", "HouseError", "Room"]
