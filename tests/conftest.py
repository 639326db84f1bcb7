"""Test-wide settings: hypothesis profiles.

``dev`` (the default) keeps Hypothesis's deadline and health checks, so a slow test or a
strategy that filters too much shows up at the desk. ``ci`` is loaded whenever ``CI`` is
set (``bash .ci/run`` runs with ``CI=true``) unless ``HYPOTHESIS_PROFILE`` names another
profile: more examples, no per-example deadline and no ``too_slow`` health check, because
a shared CI machine under load makes timing meaningless. Only checks about time are
relaxed; ``filter_too_much`` and ``data_too_large`` stay on, since they say a strategy is
wrong whatever the machine's speed.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=100)
settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _profile() -> str:
    """``HYPOTHESIS_PROFILE`` if set, else ``ci`` under CI, else ``dev``."""
    chosen = os.environ.get("HYPOTHESIS_PROFILE", "").strip()
    if chosen:
        return chosen
    in_ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return "ci" if in_ci else "dev"


settings.load_profile(_profile())
