"""``ZipCentroidDriveTime``: drive time estimated from US zip code centroids.

Distance is the great-circle (haversine) distance between the two zips' centroids, from
the ``zipcodes`` package's data (no network, no database). Minutes are that distance
times a road factor, over an average speed, rounded up, and never below a floor:

- ``ROAD_FACTOR`` 1.3: roads are longer than the straight line; 1.2-1.4 is the usual
  detour index for US street networks, 1.3 the common middle.
- ``AVERAGE_SPEED_KMH`` 40: in-town driving with lights and turns.
- ``MINIMUM_MINUTES`` 5: parking, loading and walking to the door; also the time within
  one zip.

Estimates are optimistic on rivers, bridges and hills; the OSRM adapter routes on real
roads where an OSRM server is available.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import cache, lru_cache
from typing import Any, cast

import zipcodes

from booking_core.errors import UnknownZip

ROAD_FACTOR = 1.3
AVERAGE_SPEED_KMH = 40.0
MINIMUM_MINUTES = 5
EARTH_RADIUS_KM = 6_371.0088
"""The mean Earth radius (IUGG)."""

_list_all = cast(Callable[[], list[dict[str, Any]]], zipcodes.list_all)


@cache
def centroids() -> Mapping[str, tuple[float, float]]:
    """Every zip the ``zipcodes`` data holds, with its centroid, indexed once per process.

    The package loads its data on first use (about a third of a second) and then finds a
    zip by scanning all 42,000 records (under a millisecond each time). Indexed here, a
    lookup is a dict read; ``booking serve`` calls this before it takes requests, so no
    request waits for the data. A record without a usable position is left out (its zip
    is unknown, as before); where a zip has several records the first counts.
    """
    index: dict[str, tuple[float, float]] = {}
    for record in _list_all():
        try:
            zip_code, position = record["zip_code"], (float(record["lat"]), float(record["long"]))
        except (KeyError, TypeError, ValueError):
            continue
        index.setdefault(str(zip_code), position)
    return index


def zip_centroid(zip_code: str) -> tuple[float, float]:
    """``(latitude, longitude)`` of a 5-digit US zip's centroid; ``UnknownZip`` (field
    ``zip``) for anything the data does not hold."""
    if len(zip_code) != 5 or not zip_code.isdigit():
        raise UnknownZip("zip", zip_code)
    found = centroids().get(zip_code)
    if found is None:
        raise UnknownZip("zip", zip_code)
    return found


def great_circle_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Haversine distance in kilometres between two ``(latitude, longitude)`` points."""
    lat1, lon1 = map(math.radians, a)
    lat2, lon2 = map(math.radians, b)
    h = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    )
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


class ZipCentroidDriveTime:
    """``DriveTime`` (and ``DriveTimeMatrix``) from zip centroids; see the module docstring."""

    def __init__(
        self,
        *,
        road_factor: float = ROAD_FACTOR,
        average_speed_kmh: float = AVERAGE_SPEED_KMH,
        minimum_minutes: int = MINIMUM_MINUTES,
    ) -> None:
        if road_factor < 1 or average_speed_kmh <= 0 or minimum_minutes < 0:
            raise ValueError("road_factor >= 1, average_speed_kmh > 0, minimum_minutes >= 0")
        self.road_factor = road_factor
        self.average_speed_kmh = average_speed_kmh
        self.minimum_minutes = minimum_minutes
        self._pair = lru_cache(maxsize=65_536)(self._estimate)

    def minutes(self, from_zip: str, to_zip: str) -> int:
        """Estimated minutes, rounded up; ``UnknownZip`` for an unknown zip."""
        return self._pair(from_zip, to_zip)

    def matrix(
        self, origins: Sequence[str], destinations: Sequence[str]
    ) -> dict[tuple[str, str], int]:
        """Every pair of known zips; pairs with an unknown zip are left out."""
        found: dict[tuple[str, str], int] = {}
        for origin in origins:
            for destination in destinations:
                try:
                    found[origin, destination] = self._pair(origin, destination)
                except UnknownZip:
                    continue
        return found

    def _estimate(self, from_zip: str, to_zip: str) -> int:
        start, end = zip_centroid(from_zip), zip_centroid(to_zip)
        if from_zip == to_zip:
            return self.minimum_minutes
        road_km = great_circle_km(start, end) * self.road_factor
        minutes = math.ceil(road_km / self.average_speed_kmh * 60 - 1e-9)
        return max(self.minimum_minutes, minutes)
