"""``make core-check``, inside the environment where only ``pip install .`` ran.

Run from outside the checkout (``cd /``), so nothing imports from the source folders:
what imports here is what the core distribution installed. Exits non-zero with one line
saying what is wrong.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import sys
from pathlib import Path

EXPECTED = {"booking-service", "attrs", "tzdata"}
# What `python -m venv` itself puts in a fresh environment.
VENV_TOOLS = {"pip", "setuptools", "wheel"}
SERVER_ONLY = ("adapters", "entrypoints")


def fail(message: str) -> None:
    """Stop with one line on stderr."""
    sys.exit(f"core-check: FAILED: {message}")


def main(venv: Path) -> None:
    """Check what ``pip install .`` brought into ``venv``, then price with the core."""
    installed = {
        re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower()
        for d in importlib.metadata.distributions()
    }
    extra = installed - EXPECTED - VENV_TOOLS
    if extra or EXPECTED - installed:
        fail(f"expected {sorted(EXPECTED)} installed, found {sorted(installed - VENV_TOOLS)}")
    importable = [name for name in SERVER_ONLY if importlib.util.find_spec(name) is not None]
    if importable:
        fail(f"the core install made {', '.join(importable)} importable")
    if (venv / "bin" / "booking").exists():
        fail("the core install put a `booking` command in bin/")

    from booking_core import demo

    breakdown = demo.price_demo_selection()
    print(
        "core-check: pip install . brought booking_core, attrs and tzdata only (no adapters,"
        " no entrypoints, no booking command), and priced the demo selection at",
        breakdown.total_cents,
        "cents",
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
