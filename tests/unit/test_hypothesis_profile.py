"""The hypothesis profile the test run loads: ``ci`` under CI unless told otherwise."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings

from tests.conftest import _profile


@pytest.mark.parametrize(
    ("ci", "named", "expected"),
    [
        (None, None, "dev"),
        ("true", None, "ci"),
        ("1", None, "ci"),
        ("false", None, "dev"),
        ("true", "dev", "dev"),
        (None, "ci", "ci"),
    ],
)
def test_the_profile_follows_ci_unless_hypothesis_profile_names_one(
    monkeypatch: pytest.MonkeyPatch, ci: str | None, named: str | None, expected: str
) -> None:
    for variable, value in (("CI", ci), ("HYPOTHESIS_PROFILE", named)):
        if value is None:
            monkeypatch.delenv(variable, raising=False)
        else:
            monkeypatch.setenv(variable, value)
    assert _profile() == expected


def test_the_ci_profile_has_no_deadline_and_relaxes_only_the_timing_check() -> None:
    ci = settings.get_profile("ci")
    assert ci.deadline is None
    assert list(ci.suppress_health_check) == [HealthCheck.too_slow]


def test_the_mutate_profile_is_derandomized_so_a_mutant_gets_one_verdict() -> None:
    mutate = settings.get_profile("mutate")
    assert mutate.derandomize
    assert mutate.deadline is None
    assert mutate.max_examples < settings.get_profile("ci").max_examples
    assert Phase.shrink not in mutate.phases  # a failing example kills: no time shrinking it
    assert Phase.generate in mutate.phases
