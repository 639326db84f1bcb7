"""Messages rendered from Jinja2 templates: ``<kind>.subject``, ``<kind>.txt`` and
``<kind>.html`` in ``templates/`` (``booking.confirmed.subject``, ...).

The HTML part is autoescaped (a customer's name typed as ``<b>`` shows as text); the
subject and the plain-text part are not HTML and are not escaped, and the subject is made
one line (every line break and run of spaces becomes one space) and cut to
``MAX_SUBJECT_LENGTH``, so that nothing typed into a name can start a header. Undefined
variables are errors (``StrictUndefined``).

A company's own templates, when an override folder is given (``BOOKING_MAIL_TEMPLATES``),
are ``<folder>/<company slug>/<kind>.<part>``; a part it lacks comes from
``<folder>/<kind>.<part>``, then from the defaults here. Every template is given
``company`` (the Company), ``brand_color`` (``#rrggbb``), ``reply_to`` (the company's
``notify_email`` or None), ``money`` (cents to ``$1,234.50``) and the context of its kind;
the ``end_sentence`` filter closes a sentence with a name that may end in a full stop
("Sparkle Cleaning Co." gets no second one). Any template problem is a ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from jinja2 import ChoiceLoader, FileSystemLoader, StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from adapters import phone
from booking_core.companies import Company
from booking_core.notifications import MAX_SUBJECT_LENGTH, MessageKind, one_line

TEMPLATES = Path(__file__).parent / "templates"
DEFAULT_BRAND_COLOR = "#4338ca"
"""The pages' default primary colour (adapters/web/static/app.css)."""


def money(cents: int) -> str:
    """``$1,234.50``; ``-$5.00`` below zero."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}${whole:,}.{part:02d}"


def end_sentence(text: str) -> str:
    """``text`` closing a sentence: with a full stop, unless it ends in one already
    ("Sparkle Cleaning Co." stays as it is); the emails' and the pages' filter."""
    return text if text.endswith((".", "!", "?")) else f"{text}."


class JinjaComposer:
    """The ``Composer`` port over Jinja2 templates (sandboxed: an operator's override
    templates reach only what they are given)."""

    def __init__(self, overrides: Path | None = None) -> None:
        loaders = [FileSystemLoader(str(overrides))] if overrides is not None else []
        loaders.append(FileSystemLoader(str(TEMPLATES)))
        self._overridden = overrides is not None
        self._env = SandboxedEnvironment(
            loader=ChoiceLoader(loaders),
            autoescape=lambda name: name is not None and name.endswith(".html"),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
        )
        self._env.globals["money"] = money
        self._env.filters["end_sentence"] = end_sentence
        self._env.filters["phone"] = phone.shown  # as the pages show numbers

    def _names(self, company: Company, kind: MessageKind, part: str) -> list[str]:
        name = f"{kind.value}.{part}"
        return [f"{company.slug}/{name}", name] if self._overridden else [name]

    def compose(
        self, kind: MessageKind, company: Company, context: Mapping[str, object]
    ) -> tuple[str, str, str]:
        values = {
            **context,
            "company": company,
            "brand_color": company.brand_color or DEFAULT_BRAND_COLOR,
            # Where replies go: the company's address, unless the message names another
            # (the office's own notices: the customer's).
            "reply_to": context.get("reply_to", company.notify_email),
        }
        try:
            rendered = [
                self._env.select_template(self._names(company, kind, part)).render(values)
                for part in ("subject", "txt", "html")
            ]
        except TemplateError as error:  # a missing template or variable, a sandbox refusal
            raise ValueError(f"the {kind.value} templates: {error}") from error
        subject = one_line(rendered[0])[:MAX_SUBJECT_LENGTH]
        if not subject:
            raise ValueError(f"the {kind.value} subject template rendered empty")
        return subject, rendered[1], rendered[2]
