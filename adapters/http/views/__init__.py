"""Response bodies as frozen attrs view classes, one module per resource.

A handler builds a view from domain values and a ``RenderContext`` (the company's
timezone and public addresses) and returns it in a ``Reply``; ``encoding`` writes it as
camelCase JSON, and ``schemas`` derives the JSON Schema the OpenAPI document gives for
it, so the answer and its description cannot drift apart.
"""

from __future__ import annotations

from adapters.http.jsonschema import view_schema
from adapters.http.views.base import PageView, RenderContext
from adapters.http.views.encoding import to_json

__all__ = ["PageView", "RenderContext", "to_json", "view_schema"]
