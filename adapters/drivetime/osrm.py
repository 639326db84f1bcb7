"""``OsrmDriveTime``: drive time from an OSRM server's table service.

Each zip is routed from its centroid (``zip_centroid`` by default). One lookup of many
pairs is one ``GET {base_url}/table/v1/{profile}/{lon,lat;...}?sources=...&destinations=...``
(split into several when there are more places than ``max_table_size``). Durations come
back in seconds and become whole minutes rounded up, never below the zip-centroid
adapter's floor (``MINIMUM_MINUTES``, also the time within one zip, which needs no
request). A pair OSRM cannot route is left out of ``matrix``; ``minutes`` raises
``OsrmError`` for it. An unreachable server, a timeout or an error reply raises
``OsrmError`` naming the server and what went wrong: a fault of the service, not of the
request.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Self

import httpx

from adapters.drivetime.zipcentroid import MINIMUM_MINUTES, zip_centroid
from booking_core.errors import UnknownZip

DEFAULT_TIMEOUT_SECONDS = 5.0
DEFAULT_MAX_TABLE_SIZE = 100
"""OSRM's own default ``--max-table-size``."""


class OsrmError(RuntimeError):
    """The OSRM server gave no usable answer."""


class OsrmDriveTime:
    """``DriveTime`` (and ``DriveTimeMatrix``) backed by an OSRM server; see the module."""

    def __init__(
        self,
        base_url: str,
        *,
        centroids: Callable[[str], tuple[float, float]] = zip_centroid,
        profile: str = "driving",
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        minimum_minutes: int = MINIMUM_MINUTES,
        max_table_size: int = DEFAULT_MAX_TABLE_SIZE,
        client: httpx.Client | None = None,
    ) -> None:
        if max_table_size < 2:
            raise ValueError("max_table_size is at least 2")
        self.base_url = base_url.rstrip("/")
        self.profile = profile
        self.timeout_seconds = timeout_seconds
        self.minimum_minutes = minimum_minutes
        self.max_table_size = max_table_size
        self._centroids = centroids
        self._client = client or httpx.Client(timeout=timeout_seconds)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def minutes(self, from_zip: str, to_zip: str) -> int:
        """Routed minutes, rounded up; ``UnknownZip`` for an unknown zip, ``OsrmError`` when
        the server fails or finds no route."""
        self._centroids(from_zip)
        self._centroids(to_zip)
        found = self.matrix([from_zip], [to_zip]).get((from_zip, to_zip))
        if found is None:
            raise OsrmError(f"OSRM at {self.base_url} found no route from {from_zip} to {to_zip}")
        return found

    def matrix(
        self, origins: Sequence[str], destinations: Sequence[str]
    ) -> dict[tuple[str, str], int]:
        """Every routable pair of known zips (unknown zips and unroutable pairs left out)."""
        places: dict[str, tuple[float, float]] = {}
        for zip_code in (*origins, *destinations):
            if zip_code not in places:
                try:
                    places[zip_code] = self._centroids(zip_code)
                except UnknownZip:
                    continue
        sources = [z for z in dict.fromkeys(origins) if z in places]
        targets = [z for z in dict.fromkeys(destinations) if z in places]
        found = {(z, z): self.minimum_minutes for z in sources if z in targets}
        chunk = self.max_table_size // 2
        for s in range(0, len(sources), chunk):
            for t in range(0, len(targets), chunk):
                found.update(self._table(sources[s : s + chunk], targets[t : t + chunk], places))
        return found

    def _table(
        self, sources: list[str], targets: list[str], places: dict[str, tuple[float, float]]
    ) -> dict[tuple[str, str], int]:
        if all(s == t for s in sources for t in targets):
            return {}
        points = list(dict.fromkeys((*sources, *targets)))
        index = {zip_code: n for n, zip_code in enumerate(points)}
        coordinates = ";".join(f"{places[z][1]:.6f},{places[z][0]:.6f}" for z in points)
        url = (
            f"{self.base_url}/table/v1/{self.profile}/{coordinates}"
            f"?sources={';'.join(str(index[z]) for z in sources)}"
            f"&destinations={';'.join(str(index[z]) for z in targets)}"
            "&annotations=duration"
        )
        durations = self._durations(url, len(sources), len(targets))
        found: dict[tuple[str, str], int] = {}
        for row, source in zip(durations, sources, strict=True):
            for seconds, target in zip(row, targets, strict=True):
                if source == target or seconds is None:
                    continue  # same zip: set by the caller; None: OSRM found no route
                if not isinstance(seconds, int | float) or isinstance(seconds, bool):
                    raise OsrmError(f"OSRM at {self.base_url} answered a duration {seconds!r}")
                minutes = math.ceil(float(seconds) / 60 - 1e-9)
                found[source, target] = max(self.minimum_minutes, minutes)
        return found

    def _durations(self, url: str, rows: int, columns: int) -> list[list[Any]]:
        where = f"OSRM table service at {self.base_url}"
        try:
            response = self._client.get(url, timeout=self.timeout_seconds)
        except httpx.TimeoutException as error:
            raise OsrmError(f"{where} timed out after {self.timeout_seconds:g} s") from error
        except httpx.HTTPError as error:
            raise OsrmError(f"{where} could not be reached: {error}") from error
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise OsrmError(f"{where} answered HTTP {response.status_code} without a JSON object")
        if response.status_code != 200 or body.get("code") != "Ok":
            detail = f"{body.get('code', 'no code')}: {body.get('message', 'no message')}"
            raise OsrmError(f"{where} answered HTTP {response.status_code} ({detail})")
        durations = body.get("durations")
        if (
            not isinstance(durations, list)
            or len(durations) != rows
            or not all(isinstance(row, list) and len(row) == columns for row in durations)
        ):
            raise OsrmError(f"{where} answered a table that is not {rows} x {columns} durations")
        return durations
