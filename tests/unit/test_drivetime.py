"""Drive-time adapters: zip-centroid estimates, and the OSRM client against a fake OSRM
table service on loopback (no OSRM server runs here)."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from datetime import UTC, date, datetime, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
import zipcodes

from adapters.drivetime import (
    OsrmDriveTime,
    OsrmError,
    ZipCentroidDriveTime,
    centroids,
    zip_centroid,
)
from adapters.drivetime.zipcentroid import MINIMUM_MINUTES, great_circle_km
from booking_core.availability import SlotQuery, available_slots
from booking_core.crew import CrewMember, WorkingHours
from booking_core.errors import UnknownZip
from booking_core.ports import DriveTime, DriveTimeMatrix

MIDTOWN, CHELSEA, BROOKLYN, SAN_FRANCISCO = "10001", "10011", "11201", "94110"

# --- Zip centroids ----------------------------------------------------------------------


def test_centroid_of_a_known_zip():
    lat, lon = zip_centroid(MIDTOWN)
    assert 40.7 < lat < 40.8
    assert -74.1 < lon < -73.9


def test_every_zip_of_the_data_has_the_centroid_the_package_itself_finds():
    index = centroids()
    records = zipcodes.list_all()
    assert len(index) == len({record["zip_code"] for record in records}) > 40_000
    # Every 50th record, and both ends: the package's own lookup scans them all each time.
    for record in [*records[::50], records[0], records[-1]]:
        (found, *_) = zipcodes.matching(record["zip_code"])
        expected = float(found["lat"]), float(found["long"])
        assert zip_centroid(record["zip_code"]) == index[record["zip_code"]] == expected


def test_same_zip_takes_the_fixed_minimum():
    assert ZipCentroidDriveTime().minutes(MIDTOWN, MIDTOWN) == MINIMUM_MINUTES


def test_neighbouring_zips_take_a_few_minutes():
    minutes = ZipCentroidDriveTime().minutes(MIDTOWN, BROOKLYN)
    assert MINIMUM_MINUTES < minutes <= 20


def test_estimate_is_distance_times_road_factor_over_speed_rounded_up():
    drive = ZipCentroidDriveTime(road_factor=1.3, average_speed_kmh=40)
    km = great_circle_km(zip_centroid(MIDTOWN), zip_centroid(BROOKLYN))
    assert drive.minutes(MIDTOWN, BROOKLYN) == math.ceil(km * 1.3 / 40 * 60)


def test_far_zips_take_days_of_driving_and_are_symmetric():
    drive = ZipCentroidDriveTime()
    minutes = drive.minutes(MIDTOWN, SAN_FRANCISCO)
    assert 6_000 < minutes < 10_000  # about 4,100 km as the crow flies
    assert drive.minutes(SAN_FRANCISCO, MIDTOWN) == minutes


FULLWIDTH_10001 = "\uff11\uff10\uff10\uff10\uff11"  # digits to isdigit(), not a zip


@pytest.mark.parametrize(
    "zip_code", ["00000", "99999", "1234", "abcde", "10001-1234", "", FULLWIDTH_10001, " 10001"]
)
def test_unknown_zip_raises_unknown_zip(zip_code):
    with pytest.raises(UnknownZip) as unknown:
        ZipCentroidDriveTime().minutes(MIDTOWN, zip_code)
    assert unknown.value.field == "zip"
    assert unknown.value.zip_code == zip_code


def test_matrix_leaves_out_pairs_with_an_unknown_zip():
    drive = ZipCentroidDriveTime()
    found = drive.matrix([MIDTOWN, "00000"], [MIDTOWN, CHELSEA])
    assert set(found) == {(MIDTOWN, MIDTOWN), (MIDTOWN, CHELSEA)}
    assert found[MIDTOWN, CHELSEA] == drive.minutes(MIDTOWN, CHELSEA)


def test_adapters_satisfy_the_port():
    assert isinstance(ZipCentroidDriveTime(), DriveTimeMatrix)
    with OsrmDriveTime("http://127.0.0.1:9") as osrm:
        drive: DriveTime = osrm
        assert isinstance(drive, DriveTimeMatrix)


def test_availability_with_zip_centroids_ranks_the_nearer_member_first():
    early = datetime(2026, 1, 1, tzinfo=UTC)
    hours = tuple(WorkingHours(d, time(9), time(17)) for d in range(1, 8))
    crew = [
        CrewMember(
            id=member_id,
            company_id="cmp_1",
            name=member_id,
            home_zip=home,
            created_at=early,
            updated_at=early,
            service_areas=(MIDTOWN,),
            working_hours=hours,
        )
        for member_id, home in (("crew_brooklyn", BROOKLYN), ("crew_midtown", MIDTOWN))
    ]
    q = SlotQuery("svc", MIDTOWN, date(2026, 6, 1), "America/New_York", 60, early, 0)
    found = available_slots(q, crew=crew, busy={}, drive=ZipCentroidDriveTime())
    assert found[0].crew_ids == ("crew_midtown",)
    assert found[0].drive_minutes == MINIMUM_MINUTES
    assert found[0].start.time() == time(9, 15)


# --- A fake OSRM table service -------------------------------------------------------------


class FakeOsrm(ThreadingHTTPServer):
    """Answers ``/{mode}/table/v1/driving/...`` like OSRM: ``ok`` with durations of 100 s
    per 0.001 degree of longitude-plus-latitude difference; other modes misbehave."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[str] = []
        self.release = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request, client_address) -> None:
        pass  # a client that timed out and hung up is expected here


class _Handler(BaseHTTPRequestHandler):
    server: FakeOsrm

    def log_message(self, format, *args) -> None:
        pass

    def do_GET(self) -> None:
        self.server.requests.append(self.path)
        parts = urlsplit(self.path)
        _, mode, service, version, profile, coordinates = parts.path.split("/", 5)
        assert (service, version, profile) == ("table", "v1", "driving")
        query = parse_qs(parts.query)
        points = [tuple(map(float, p.split(","))) for p in coordinates.split(";")]
        sources = [int(i) for i in query["sources"][0].split(";")]
        targets = [int(i) for i in query["destinations"][0].split(";")]
        if mode == "slow":
            self.server.release.wait(5)
        if mode == "fail":
            return self.reply(500, {"code": "InternalError", "message": "out of memory"})
        if mode == "garbage":
            return self.reply(200, "not json at all")
        durations = [
            [
                None
                if mode == "noroute"
                else 100_000 * (abs(points[s][0] - points[t][0]) + abs(points[s][1] - points[t][1]))
                for t in targets
            ]
            for s in sources
        ]
        return self.reply(200, {"code": "Ok", "durations": durations})

    def reply(self, status: int, body: object) -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def osrm_server() -> Iterator[FakeOsrm]:
    server = FakeOsrm()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()
    thread.join(5)


def expected_minutes(a: str, b: str) -> int:
    (lat1, lon1), (lat2, lon2) = zip_centroid(a), zip_centroid(b)
    lon1, lat1, lon2, lat2 = (float(f"{v:.6f}") for v in (lon1, lat1, lon2, lat2))
    seconds = 100_000 * (abs(lon1 - lon2) + abs(lat1 - lat2))
    return max(MINIMUM_MINUTES, math.ceil(seconds / 60 - 1e-9))


def test_osrm_minutes_are_routed_seconds_rounded_up(osrm_server):
    with OsrmDriveTime(f"{osrm_server.url}/ok/") as drive:
        assert drive.minutes(MIDTOWN, BROOKLYN) == expected_minutes(MIDTOWN, BROOKLYN)
    (path,) = osrm_server.requests
    lat, lon = zip_centroid(MIDTOWN)
    assert path.startswith(f"/ok/table/v1/driving/{lon:.6f},{lat:.6f};")
    assert path.endswith("?sources=0&destinations=1&annotations=duration")


def test_osrm_matrix_is_one_request_for_many_pairs(osrm_server):
    origins, targets = [MIDTOWN, CHELSEA, "00000"], [BROOKLYN, MIDTOWN]
    with OsrmDriveTime(f"{osrm_server.url}/ok") as drive:
        found = drive.matrix(origins, targets)
    assert len(osrm_server.requests) == 1
    assert found == {
        (MIDTOWN, BROOKLYN): expected_minutes(MIDTOWN, BROOKLYN),
        (MIDTOWN, MIDTOWN): MINIMUM_MINUTES,
        (CHELSEA, BROOKLYN): expected_minutes(CHELSEA, BROOKLYN),
        (CHELSEA, MIDTOWN): expected_minutes(CHELSEA, MIDTOWN),
    }


def test_osrm_splits_tables_larger_than_the_server_allows(osrm_server):
    origins = [MIDTOWN, CHELSEA, BROOKLYN]
    with OsrmDriveTime(f"{osrm_server.url}/ok", max_table_size=4) as drive:
        found = drive.matrix(origins, [SAN_FRANCISCO])
    assert len(osrm_server.requests) == 2
    assert set(found) == {(o, SAN_FRANCISCO) for o in origins}


def test_osrm_same_zip_needs_no_request(osrm_server):
    with OsrmDriveTime(f"{osrm_server.url}/ok") as drive:
        assert drive.minutes(MIDTOWN, MIDTOWN) == MINIMUM_MINUTES
    assert osrm_server.requests == []


def test_osrm_unknown_zip_raises_unknown_zip_without_a_request(osrm_server):
    with OsrmDriveTime(f"{osrm_server.url}/ok") as drive, pytest.raises(UnknownZip):
        drive.minutes(MIDTOWN, "00000")
    assert osrm_server.requests == []


def test_osrm_unroutable_pair_is_left_out_of_the_matrix(osrm_server):
    with OsrmDriveTime(f"{osrm_server.url}/noroute") as drive:
        assert drive.matrix([MIDTOWN], [BROOKLYN]) == {}
        with pytest.raises(OsrmError, match="no route from 10001 to 11201"):
            drive.minutes(MIDTOWN, BROOKLYN)


def test_osrm_server_error_is_a_clear_error(osrm_server):
    with OsrmDriveTime(f"{osrm_server.url}/fail") as drive, pytest.raises(OsrmError) as failed:
        drive.minutes(MIDTOWN, BROOKLYN)
    assert "HTTP 500" in str(failed.value)
    assert "InternalError: out of memory" in str(failed.value)


def test_osrm_reply_that_is_not_json_is_a_clear_error(osrm_server):
    drive = OsrmDriveTime(f"{osrm_server.url}/garbage")
    with drive, pytest.raises(OsrmError, match="without a JSON object"):
        drive.minutes(MIDTOWN, BROOKLYN)


def test_osrm_timeout_is_a_clear_error(osrm_server):
    drive = OsrmDriveTime(f"{osrm_server.url}/slow", timeout_seconds=0.2)
    with drive, pytest.raises(OsrmError, match=r"timed out after 0\.2 s"):
        drive.minutes(MIDTOWN, BROOKLYN)


def test_osrm_unreachable_server_is_a_clear_error(osrm_server):
    url = osrm_server.url
    osrm_server.shutdown()
    osrm_server.server_close()
    drive = OsrmDriveTime(url, timeout_seconds=1)
    with drive, pytest.raises(OsrmError, match="could not be reached"):
        drive.minutes(MIDTOWN, BROOKLYN)
