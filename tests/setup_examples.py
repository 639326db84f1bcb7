"""The worked example of docs/setup.md, read from the page itself so that it cannot go
stale: the catalog and crew documents, the quote request and the totals the page states."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

PAGE = Path(__file__).resolve().parents[1] / "docs" / "setup.md"


def _blocks() -> list[tuple[str, str]]:
    return re.findall(r"^```(\w*)\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.S | re.M)


def document(name: str) -> str:
    """The fenced block that starts with the comment ``# <name>`` (``catalog.yaml``)."""
    found = [body for _, body in _blocks() if body.startswith(f"# {name}\n")]
    assert len(found) == 1, f"docs/setup.md has {len(found)} blocks named {name}"
    return found[0]


def quote_request() -> dict[str, Any]:
    """The ``POST /api/v1/quote`` body of the example."""
    found = [body for lang, body in _blocks() if lang == "json" and '"serviceId"' in body]
    assert len(found) == 1
    body: dict[str, Any] = json.loads(found[0])
    return body


def stated_totals() -> tuple[int, int]:
    """The first-visit and later-visit ``totalCents`` the page states."""
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(r"^\| `totalCents` \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \|$", text, re.M)
    assert found is not None, "docs/setup.md states no totals"
    return int(found.group(1)), int(found.group(2))
