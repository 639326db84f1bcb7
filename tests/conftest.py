"""Test-wide settings: hypothesis profiles.

``dev`` (the default) keeps Hypothesis's deadline and health checks, so a slow test or a
strategy that filters too much shows up at the desk. ``ci`` is loaded whenever ``CI`` is
set (``bash .ci/run`` runs with ``CI=true``) unless ``HYPOTHESIS_PROFILE`` names another
profile: more examples, no per-example deadline and no ``too_slow`` health check, because
a shared CI machine under load makes timing meaningless. Only checks about time are
relaxed; ``filter_too_much`` and ``data_too_large`` stay on, since they say a strategy is
wrong whatever the machine's speed. ``mutate`` is ``make mutate``'s (docs/testing.md): the
tests run once per mutant, so few examples, no deadline, and derandomized so a mutant gets
the same verdict on every run, and no shrinking, since the first failing example
already kills a mutant.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, settings

settings.register_profile("dev", max_examples=100)
settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "mutate",
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
    # A mutant is killed by the first failing example: shrinking it would only spend
    # time (31 s instead of 3.5 s for one windows mutant), the verdict is the same.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)


def _profile() -> str:
    """``HYPOTHESIS_PROFILE`` if set, else ``ci`` under CI, else ``dev``."""
    chosen = os.environ.get("HYPOTHESIS_PROFILE", "").strip()
    if chosen:
        return chosen
    in_ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return "ci" if in_ci else "dev"


settings.load_profile(_profile())


# Under pytest-xdist (``make test``: ``--dist loadfile``) a test file runs whole on one
# worker, the files handed out in collection order: the longest go first, so that no
# worker is left running one of them alone at the end. A stable sort, after pytest's own
# grouping of tests by their parametrized fixtures. The Makefile passes
# ``--no-loadscope-reorder``: xdist would otherwise hand out the files with most tests first.
LONGEST_FIRST = (
    "tests/e2e/test_fuzz.py",
    "tests/unit/test_pricing_properties.py",
    "tests/unit/test_availability_properties.py",
    "tests/e2e/test_booking_races.py",
    "tests/browser/test_public_booking.py",
)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: place for place, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
