"""The ``booking`` console script's first module. It takes Ctrl-C over before the
service's modules load (which takes a moment): a Ctrl-C meanwhile ends the command as
one at a prompt does, with ``booking: cancelled`` and status 130, not a traceback from
whichever import it interrupted. ``entrypoints.cli.main`` then handles Ctrl-C itself; a
second Ctrl-C while the finished command exits changes nothing."""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType


def _cancelled(signum: int, frame: FrameType | None) -> None:
    sys.stderr.write("\nbooking: cancelled\n")
    sys.stderr.flush()
    os._exit(130)  # nothing has started yet: nothing to roll back or close


def main() -> int:
    """Run ``booking``: see the module."""
    signal.signal(signal.SIGINT, _cancelled)
    from entrypoints.cli import main as run

    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return run()
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # exiting: a late Ctrl-C is ignored
