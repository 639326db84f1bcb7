"""Drive-time lookups the core needs, and a table-driven fake of the ``DriveTime`` port.

The port itself lives in ``booking_core.ports``; the adapters (zip centroids, OSRM) in
``adapters/drivetime``. ``TableDriveTime`` is a first-class fake, like ``FixedClock``:
tests, demos and embedders that know their drive times use it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import cast

from attrs import field, frozen

from booking_core.errors import UnknownZip
from booking_core.ports import DriveTime, DriveTimeMatrix


def _table(value: Mapping[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    return dict(value)


def _known(value: Collection[str] | None) -> frozenset[str] | None:
    return None if value is None else frozenset(value)


@frozen
class TableDriveTime:
    """Drive minutes from a table of ``(from_zip, to_zip)`` pairs.

    A pair not in the table takes its reverse, else ``default``; within one zip,
    ``same_zip``. With ``known`` given, any other zip raises ``UnknownZip`` (field ``zip``).
    """

    table: Mapping[tuple[str, str], int] = field(factory=dict, converter=_table)
    default: int = 15
    same_zip: int = 0
    known: frozenset[str] | None = field(default=None, converter=_known)

    def minutes(self, from_zip: str, to_zip: str) -> int:
        """Minutes from the table (see the class docstring)."""
        for zip_code in (from_zip, to_zip):
            if self.known is not None and zip_code not in self.known:
                raise UnknownZip("zip", zip_code)
        if from_zip == to_zip:
            return self.table.get((from_zip, to_zip), self.same_zip)
        found = self.table.get((from_zip, to_zip))
        if found is None:
            found = self.table.get((to_zip, from_zip), self.default)
        return found

    def matrix(
        self, origins: Sequence[str], destinations: Sequence[str]
    ) -> dict[tuple[str, str], int]:
        """Every pair of known zips, as ``minutes`` answers it."""
        return drive_table(_PerPair(self), origins, destinations)


@frozen
class _PerPair:
    """A source seen through ``minutes`` alone (so ``drive_table`` asks pair by pair)."""

    source: DriveTime

    def minutes(self, from_zip: str, to_zip: str) -> int:
        return self.source.minutes(from_zip, to_zip)


def drive_table(
    drive: DriveTime, origins: Iterable[str], destinations: Iterable[str]
) -> dict[tuple[str, str], int]:
    """Minutes for each ``(origin, destination)`` pair the source knows; pairs with an
    unknown zip are left out. One batch lookup when the source offers ``matrix``."""
    origin_list = sorted(set(origins))
    destination_list = sorted(set(destinations))
    if not origin_list or not destination_list:
        return {}
    matrix = getattr(drive, "matrix", None)  # cheaper than isinstance on a Protocol
    if matrix is not None:
        return cast(DriveTimeMatrix, drive).matrix(origin_list, destination_list)
    found: dict[tuple[str, str], int] = {}
    for origin in origin_list:
        for destination in destination_list:
            try:
                found[origin, destination] = drive.minutes(origin, destination)
            except UnknownZip:
                continue
    return found


def require_known_zip(drive: DriveTime, zip_code: str, field_name: str) -> None:
    """Raise ``UnknownZip`` on ``field_name`` when the source does not know ``zip_code``."""
    try:
        drive.minutes(zip_code, zip_code)
    except UnknownZip as error:
        raise UnknownZip(field_name, zip_code) from error
