"""What ``booking serve``'s application has done before it takes its first request."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.drivetime import zipcentroid
from entrypoints import web
from entrypoints.bootstrap import Container
from entrypoints.settings import Settings


def test_the_zip_data_is_loaded_before_the_first_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading it takes about a third of a second: the first availability check, quote
    or booking of every worker process waited for it."""
    zipcentroid.centroids.cache_clear()
    made: list[Container] = []
    original = web.bootstrap

    def bootstrap(settings: Settings | None = None) -> Container:
        container = original(settings)
        made.append(container)
        return container

    monkeypatch.setattr(web, "bootstrap", bootstrap)
    monkeypatch.setattr(web, "configure_logging", lambda: None)  # leave the tests' logs be
    settings = Settings.from_env({"BOOKING_DATABASE_URL": f"sqlite:///{tmp_path / 's.db'}"})
    try:
        web.build_app(settings)
        assert zipcentroid.centroids.cache_info().currsize == 1
    finally:
        for container in made:
            container.close()
    # A lookup afterwards finds the data loaded: no second load.
    assert zipcentroid.zip_centroid("10011") == zipcentroid.centroids()["10011"]
    assert zipcentroid.centroids.cache_info().misses == 1
