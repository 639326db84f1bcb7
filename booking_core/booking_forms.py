"""Booking forms: what a company's online booking page offers and asks.

A form (``bf_...``) names the services it books (at least one), the frequencies and the
extras it offers (an empty list offers every one the catalog has) and the intake
questions it asks: ``text`` (free text) or ``choice`` (one of its ``choices``), each
optional or required. A question's id is the company's own slug (``gate-code``) or one
made for it (``q_...``); it is unique in its form.

``form_errors`` checks a form against the company's catalog; ``check_answers`` checks a
booking made through a form (service, frequency and extras offered, every required
question answered, answers within their ceilings) and returns the answers as the booking
keeps them: each with its question's label at booking time, so a booking reads the same
after the form changes or goes. Field errors are dotted snake_case paths as the rest of
the core names them (``questions.2.choices``, ``answers.0.answer``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from datetime import datetime

from attrs import field, frozen

from booking_core.catalog import Catalog
from booking_core.clock import require_aware
from booking_core.errors import ValidationFailed
from booking_core.ids import new_id
from booking_core.plain_text import NOT_ONE_LINE, has_hidden_characters
from booking_core.pricing import Selection

MAX_NAME_LENGTH = 200
MAX_QUESTIONS = 100
MAX_LABEL_LENGTH = 200
MAX_CHOICES = 50
MAX_CHOICE_LENGTH = 200
MAX_ANSWER_LENGTH = 500
"""SPEC.md section 8: one intake answer."""
MAX_ANSWERS = 100
"""SPEC.md section 8: answers on one booking."""
QUESTION_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\Z")
"""A question id: the company's slug (lower-case letters, digits, ``-`` and ``_``) or
one made for it (``q_`` and hex)."""
QUESTION_ID_TEXT = (
    "Lower-case letters, digits, - and _ (at most 64), starting with a letter or digit."
)


class QuestionKind(enum.StrEnum):
    """How a question is answered."""

    TEXT = "text"
    CHOICE = "choice"


@frozen(kw_only=True)
class Question:
    """One intake question; ``choices`` are a ``choice`` question's options, in order."""

    id: str
    label: str
    kind: QuestionKind = QuestionKind.TEXT
    required: bool = False
    choices: tuple[str, ...] = ()


def _aware(_: object, attribute: object, value: datetime) -> None:
    require_aware(value, "booking form instants")


@frozen(kw_only=True)
class BookingForm:
    """A company's booking form. Empty ``frequency_slugs`` or ``extra_ids``: all offered."""

    id: str
    company_id: str
    name: str
    service_ids: tuple[str, ...]
    frequency_slugs: tuple[str, ...] = ()
    extra_ids: tuple[str, ...] = ()
    questions: tuple[Question, ...] = ()
    active: bool = True
    created_at: datetime = field(validator=_aware)
    updated_at: datetime = field(validator=_aware)

    @property
    def questions_by_id(self) -> dict[str, Question]:
        """Questions keyed by id."""
        return {q.id: q for q in self.questions}

    def offers_frequency(self, slug: str) -> bool:
        """True when a booking through the form may have this frequency."""
        return not self.frequency_slugs or slug in self.frequency_slugs

    def offers_extra(self, extra_id: str) -> bool:
        """True when a booking through the form may have this extra."""
        return not self.extra_ids or extra_id in self.extra_ids


@frozen
class Answer:
    """One intake answer as a booking keeps it: the question's id, its label when the
    booking was made, and what was answered."""

    question_id: str
    question: str
    answer: str


# --- Checking a form -------------------------------------------------------------------


def _list_errors(
    path: str, values: Sequence[str], known: Mapping[str, object], what: str
) -> dict[str, str]:
    errors: dict[str, str] = {}
    for index, value in enumerate(values):
        if value in values[:index]:
            errors[f"{path}.{index}"] = "Listed twice."
        elif value not in known:
            errors[f"{path}.{index}"] = f"No {what} {value!r} in the catalog."
    return errors


def question_errors(index: int, question: Question) -> dict[str, str]:
    """Field errors of one question (paths ``questions.<index>.*``)."""
    path = f"questions.{index}"
    errors: dict[str, str] = {}
    if not QUESTION_ID.match(question.id):
        errors[f"{path}.id"] = QUESTION_ID_TEXT
    if not question.label.strip():
        errors[f"{path}.label"] = "Required: may not be empty."
    elif len(question.label) > MAX_LABEL_LENGTH:
        errors[f"{path}.label"] = f"At most {MAX_LABEL_LENGTH} characters."
    elif has_hidden_characters(question.label):
        errors[f"{path}.label"] = NOT_ONE_LINE
    if question.kind is QuestionKind.CHOICE:
        if not question.choices:
            errors[f"{path}.choices"] = "A choice question has at least one choice."
        elif len(question.choices) > MAX_CHOICES:
            errors[f"{path}.choices"] = f"At most {MAX_CHOICES} items."
        for number, choice in enumerate(question.choices[:MAX_CHOICES]):
            if not choice.strip():
                errors[f"{path}.choices.{number}"] = "Required: may not be empty."
            elif len(choice) > MAX_CHOICE_LENGTH:
                errors[f"{path}.choices.{number}"] = f"At most {MAX_CHOICE_LENGTH} characters."
            elif choice in question.choices[:number]:
                errors[f"{path}.choices.{number}"] = "Listed twice."
    elif question.choices:
        errors[f"{path}.choices"] = "Only a choice question has choices."
    return errors


def form_errors(
    form: BookingForm, catalog: Catalog, *, stored: BookingForm | None = None
) -> dict[str, str]:
    """Every field error of ``form`` against the company's catalog: the name, services
    (at least one, each the catalog's, not all of them retired, unless they are the
    services ``stored``, the form as stored, already named: retiring them since is the
    catalog's change, and the form must still export and import back), frequencies and
    extras (each the catalog's; an extra one of the form's services'), and the
    questions."""
    errors: dict[str, str] = {}
    if not form.name.strip():
        errors["name"] = "Required: may not be empty."
    elif len(form.name) > MAX_NAME_LENGTH:
        errors["name"] = f"At most {MAX_NAME_LENGTH} characters."
    elif has_hidden_characters(form.name):
        errors["name"] = NOT_ONE_LINE
    if not form.service_ids:
        errors["service_ids"] = "List at least one service the form books."
    errors.update(_list_errors("service_ids", form.service_ids, catalog.services_by_id, "service"))
    known = [catalog.services_by_id[s] for s in form.service_ids if s in catalog.services_by_id]
    named_before = stored is not None and set(stored.service_ids) == set(form.service_ids)
    retired = known and len(known) == len(form.service_ids) and not any(s.active for s in known)
    if retired and not named_before:
        # A form of retired services only would book nothing (its page would offer none).
        errors["service_ids"] = "None of these services is offered now: list an active one."
    errors.update(
        _list_errors(
            "frequency_slugs", form.frequency_slugs, catalog.frequencies_by_slug, "frequency"
        )
    )
    services = [catalog.services_by_id[s] for s in form.service_ids if s in catalog.services_by_id]
    extras = {e.id: e for service in services for e in service.extras}
    for index, extra_id in enumerate(form.extra_ids):
        if extra_id in form.extra_ids[:index]:
            errors[f"extra_ids.{index}"] = "Listed twice."
        elif extra_id not in extras:
            errors[f"extra_ids.{index}"] = f"No extra {extra_id!r} on the form's services."
    if len(form.questions) > MAX_QUESTIONS:
        errors["questions"] = f"At most {MAX_QUESTIONS} items."
    for index, question in enumerate(form.questions[:MAX_QUESTIONS]):
        errors.update(question_errors(index, question))
        if question.id in (q.id for q in form.questions[:index]):
            errors.setdefault(f"questions.{index}.id", "Another question has this id.")
    return errors


def checked_form(form: BookingForm, catalog: Catalog) -> BookingForm:
    """``form`` when it is valid against the catalog; else ``ValidationFailed`` naming
    every problem."""
    errors = form_errors(form, catalog)
    if errors:
        raise ValidationFailed(errors)
    return form


# --- Drafts: a form as written --------------------------------------------------------

FORM_ID = re.compile(r"^bf_[A-Za-z0-9]{1,60}\Z")
"""A form id: ``bf_`` and letters or digits (``new_id("bf")`` makes them)."""


@frozen(kw_only=True)
class QuestionDraft:
    """A question as written; without an id one is made (``q_...``)."""

    id: str | None = None
    label: str
    kind: QuestionKind = QuestionKind.TEXT
    required: bool = False
    choices: tuple[str, ...] = ()


@frozen(kw_only=True)
class FormDraft:
    """A form as written (an API body, an entry of a forms document), checked by
    ``build_form``; without an id it is a new form."""

    id: str | None = None
    name: str
    service_ids: tuple[str, ...]
    frequency_slugs: tuple[str, ...] = ()
    extra_ids: tuple[str, ...] = ()
    questions: tuple[QuestionDraft, ...] = ()
    active: bool = True


@frozen(kw_only=True)
class FormsDraft:
    """A company's booking forms as one document (``booking forms export|import``)."""

    forms: tuple[FormDraft, ...] = ()


def build_form(
    draft: FormDraft,
    catalog: Catalog,
    *,
    at: datetime,
    stored: BookingForm | None = None,
) -> BookingForm:
    """The form ``draft`` describes for the catalog's company, checked against the
    catalog: ``stored`` changed (its id and ``created_at`` kept), else a new form (the
    draft's id, or a new ``bf_...``). Questions without an id get a new ``q_...``.
    Raises ``ValidationFailed`` naming every problem (``form_errors``)."""
    errors: dict[str, str] = {}
    if stored is None and draft.id is not None and not FORM_ID.match(draft.id):
        errors["id"] = "A booking form id: bf_ and letters or digits (at most 63)."
    form_id = stored.id if stored is not None else draft.id or new_id("bf")
    form = BookingForm(
        id=form_id,
        company_id=catalog.company_id,
        name=draft.name,
        service_ids=draft.service_ids,
        frequency_slugs=draft.frequency_slugs,
        extra_ids=draft.extra_ids,
        questions=tuple(
            Question(
                id=q.id if q.id is not None else new_id("q"),
                label=q.label,
                kind=q.kind,
                required=q.required,
                choices=q.choices,
            )
            for q in draft.questions
        ),
        active=draft.active,
        created_at=stored.created_at if stored is not None else at,
        updated_at=at,
    )
    errors.update(form_errors(form, catalog, stored=stored))
    if errors:
        raise ValidationFailed(errors)
    return form


def draft_of(form: BookingForm) -> FormDraft:
    """``form`` as written: ``build_form(draft_of(f), ..., stored=f)`` is ``f`` again
    (but for ``updated_at``)."""
    return FormDraft(
        id=form.id,
        name=form.name,
        service_ids=form.service_ids,
        frequency_slugs=form.frequency_slugs,
        extra_ids=form.extra_ids,
        questions=tuple(
            QuestionDraft(
                id=q.id, label=q.label, kind=q.kind, required=q.required, choices=q.choices
            )
            for q in form.questions
        ),
        active=form.active,
    )


def same_content(first: BookingForm, second: BookingForm) -> bool:
    """True when the two differ at most in their instants."""
    return draft_of(first) == draft_of(second)


# --- Checking a booking made through a form -------------------------------------------


def answers_errors_without_form(answers: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Answers sent without a ``formId`` have no questions to answer."""
    return {"answers": "Answers belong to a form: give formId too."} if answers else {}


def check_answers(
    form: BookingForm, selection: Selection, answers: Sequence[tuple[str, str]]
) -> tuple[Answer, ...]:
    """The answers a booking through ``form`` keeps, in the order given, after checking
    the booking against the form: its service, frequency and extras offered, at most
    ``MAX_ANSWERS`` answers of at most ``MAX_ANSWER_LENGTH`` characters each, every
    question id the form's and answered once, a choice one of its choices, and every
    required question answered (not blank). ``answers`` are ``(question id, answer)``.

    Raises ``ValidationFailed`` naming every problem: ``form_id`` (an inactive form),
    ``service_id``, ``frequency_slug``, ``extras.<n>.id``, ``answers`` and
    ``answers.<n>.question_id`` / ``answers.<n>.answer``.
    """
    errors: dict[str, str] = {}
    if not form.active:
        errors["form_id"] = "This booking form is not taking bookings."
    if selection.service_id not in form.service_ids:
        errors["service_id"] = "This booking form does not offer this service."
    if not form.offers_frequency(selection.frequency_slug):
        errors["frequency_slug"] = "This booking form does not offer this frequency."
    for index, item in enumerate(selection.extras):
        if not form.offers_extra(item.id):
            errors[f"extras.{index}.id"] = "This booking form does not offer this extra."
    questions = form.questions_by_id
    kept: list[Answer] = []
    answered: set[str] = set()
    if len(answers) > MAX_ANSWERS:  # the ceiling alone: the answers are not read
        errors["answers"] = f"At most {MAX_ANSWERS} items."
        answers = ()
    for index, (question_id, text) in enumerate(answers):
        path = f"answers.{index}"
        question = questions.get(question_id)
        if question is None:
            errors[f"{path}.question_id"] = f"No question {question_id!r} on this form."
            continue
        if question_id in answered:
            errors[f"{path}.question_id"] = "Answered twice."
            continue
        answered.add(question_id)
        if len(text) > MAX_ANSWER_LENGTH:
            errors[f"{path}.answer"] = f"At most {MAX_ANSWER_LENGTH} characters."
        elif question.kind is QuestionKind.CHOICE and text and text not in question.choices:
            errors[f"{path}.answer"] = "Must be one of: " + ", ".join(
                repr(c) for c in question.choices
            )
        if text.strip():
            kept.append(Answer(question_id, question.label, text))
    missing = [
        q for q in form.questions if q.required and not any(a.question_id == q.id for a in kept)
    ]
    if missing and "answers" not in errors:
        named = ", ".join(f"{q.label!r} ({q.id})" for q in missing)
        errors["answers"] = (
            f"Answer the required question{'s' if len(missing) > 1 else ''} {named}."
        )
    if errors:
        raise ValidationFailed(errors)
    return tuple(kept)
