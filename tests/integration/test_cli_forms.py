"""``booking forms export|import|list`` on SQLite and PostgreSQL: a forms document is
checked whole against the company's catalog before anything is written, and export,
import and export again give the same text."""

from __future__ import annotations

import json

from tests.integration.test_cli_setup import Run, brightside, run

__all__ = ["brightside", "run"]  # the fixtures, on both backends

FORMS = """\
forms:
- name: Spring clean
  serviceIds:
  - svc_standard
  frequencySlugs:
  - weekly
  extraIds:
  - ext_oven
  questions:
  - id: gate-code
    label: Gate code?
    required: true
  - label: Pets at home?
    kind: choice
    choices:
    - None
    - Cat
    - Dog
- name: Quick quote page
  serviceIds:
  - svc_standard
  active: false
"""


def test_forms_round_trip_through_export_and_import(brightside: Run):
    path = brightside.file("forms.yaml", FORMS)
    # A dry run shows no id for a form the document gives none: none is drawn yet.
    dry = json.loads(
        brightside.ok("forms", "import", "--company", "brightside", path, "--dry-run", "--json")
    )
    assert dry["added"] == [
        {"id": None, "name": "Spring clean"},
        {"id": None, "name": "Quick quote page"},
    ]
    assert json.loads(brightside.ok("forms", "list", "--company", "brightside", "--json")) == []
    out = brightside.ok("forms", "import", "--company", "brightside", path)
    assert (
        out.strip() == "imported the booking forms of brightside: 2 added, 0 updated, 0 unchanged"
    )

    exported = brightside.ok("forms", "export", "--company", "brightside", "--format", "yaml")
    forms = brightside.ok("forms", "list", "--company", "brightside", "--json")
    listed = json.loads(forms)
    assert [f["name"] for f in listed] == ["Quick quote page", "Spring clean"]  # newest first
    assert [f["active"] for f in listed] == [False, True]
    assert listed[1]["questions"] == 2
    assert "gate-code" in exported
    assert "id: bf_" in exported
    assert "id: q_" in exported  # the question without an id got one

    again = brightside.file("again.yaml", exported)
    summary = json.loads(
        brightside.ok("forms", "import", "--company", "brightside", again, "--json")
    )
    assert [len(summary[k]) for k in ("added", "updated", "unchanged")] == [0, 0, 2]
    assert brightside.ok("forms", "export", "--company", "brightside", "--format", "yaml") == (
        exported
    )

    renamed = brightside.file("renamed.yaml", exported.replace("Spring clean", "Summer clean"))
    brightside.ok("forms", "import", "--company", "brightside", renamed)
    text = brightside.ok("forms", "list", "--company", "brightside")
    assert "Summer clean" in text
    assert "Spring clean" not in text


def test_a_bad_forms_document_names_every_problem_and_writes_nothing(brightside: Run):
    bad = (
        FORMS.replace("  - weekly\n", "  - fortnightly\n")
        .replace("  - ext_oven\n", "  - ext_nope\n")
        .replace("    - Dog\n", "    - Dog\n    - Cat\n")
    )
    path = brightside.file("bad.yaml", bad)

    status, out, err = brightside("forms", "import", "--company", "brightside", path)

    assert status == 1
    assert out == ""
    assert err.splitlines() == [
        f"booking: {path}: forms.0.frequencySlugs.0: No frequency 'fortnightly' in the catalog.",
        f"booking: {path}: forms.0.extraIds.0: No extra 'ext_nope' on the form's services.",
        f"booking: {path}: forms.0.questions.1.choices.3: Listed twice.",
        f"booking: {path}: 3 problems; nothing was written",
    ]
    assert "has no booking forms" in brightside.ok("forms", "list", "--company", "brightside")


def test_wrong_types_are_named_at_their_path(brightside: Run):
    document = '{"forms": [{"name": 3, "serviceIds": "svc_standard", "colour": "red"}]}'

    status, _, err = brightside("forms", "import", "--company", "brightside", "-", stdin=document)

    assert status == 1
    lines = err.splitlines()
    assert lines[-1] == "booking: stdin: 3 problems; nothing was written"
    assert any("forms.0.colour: Unknown field." in line for line in lines)
    assert any("forms.0.name:" in line for line in lines)
