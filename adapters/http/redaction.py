"""What log lines may say about requests and errors.

Logs never carry request bodies, customer data, SQL parameters or secret tokens. So:

* a path is logged with every segment after ``track``, ``q``, ``sign-in/link`` or
  ``portal/link`` replaced by ``***``: the public pages ``/{slug}/track/{token}`` and
  ``/{slug}/q/{token}`` carry the token that opens a customer's booking or quote,
  ``/sign-in/link/{token}`` a one-time sign-in and ``/{slug}/portal/link/{token}`` a
  customer's one-time portal sign-in;
* an exception is logged by its class, the classes it came from, a database's SQLSTATE
  and where it was raised (file, line, function), never by its text: a driver's message
  may quote the row it refused (``Key (email_key)=(ada@example.com) already exists``),
  and SQLAlchemy's adds the statement.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

MASK = "***"
SECRET_AFTER = frozenset({"track", "q"})
"""Path segments after which everything is a secret token."""
SECRET_AFTER_PAIRS = frozenset({("sign-in", "link"), ("portal", "link")})
"""Two segments in a row after which everything is a secret token."""
STACK_FRAMES = 12
"""The innermost frames of our own code kept of an exception's traceback."""
OWN_PACKAGES = frozenset({"booking_core", "adapters", "entrypoints"})
_ROOT = Path(__file__).resolve().parents[2]


def masked_path(path: str | None) -> str | None:
    """``path`` with every segment after ``/track/``, ``/q/``, ``/sign-in/link/`` or
    ``/portal/link/`` written as ``***``."""
    if not path:
        return path
    segments = path.split("/")
    for index, segment in enumerate(segments):
        pair = (segments[index - 1], segment) if index else ("", segment)
        if segment in SECRET_AFTER or pair in SECRET_AFTER_PAIRS:
            tail = ["" if not s else MASK for s in segments[index + 1 :]]
            return "/".join([*segments[: index + 1], *tail])
    return path


def error_fields(error: BaseException) -> dict[str, Any]:
    """Log fields describing ``error`` without a word of its message."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and not any(current is seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    fields: dict[str, Any] = {"error_type": _qualified(error)}
    if len(chain) > 1:
        fields["error_chain"] = [_qualified(e) for e in chain[1:]]
    sqlstate = next((s for e in chain if (s := _sqlstate(e)) is not None), None)
    if sqlstate is not None:
        fields["sqlstate"] = sqlstate
    frames = traceback.extract_tb(error.__traceback__)
    # Our own frames tell the story; of a library's, only the one that raised.
    kept = [f for f in frames if not _in_library(f.filename)][-STACK_FRAMES:]
    if frames and _in_library(frames[-1].filename):
        kept.append(frames[-1])
    fields["stack"] = [f"{_where(f.filename)}:{f.lineno} {f.name}" for f in kept]
    return fields


def _qualified(error: BaseException) -> str:
    kind = type(error)
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


def _sqlstate(error: BaseException) -> str | None:
    for candidate in (error, getattr(error, "orig", None)):
        state = getattr(candidate, "sqlstate", None)
        if isinstance(state, str):
            return state
    return None


def _in_library(filename: str) -> bool:
    parts = Path(filename).parts
    if "site-packages" in parts:  # ours too, when installed rather than checked out
        return parts[parts.index("site-packages") + 1] not in OWN_PACKAGES
    return not filename.startswith(str(_ROOT))


def _where(filename: str) -> str:
    parts = Path(filename).parts
    if "site-packages" in parts:
        return "/".join(parts[parts.index("site-packages") + 1 :])
    try:
        return str(Path(filename).relative_to(_ROOT))
    except ValueError:
        return Path(filename).name
