"""Suppressions: annotation and comment forms, exact matching, reasons, expiry, audit."""

from __future__ import annotations

from datetime import date

import pytest
from lint_support import run

from gpustack.lint.model import Note
from gpustack.lint.policy.config import Config
from gpustack.lint.policy.suppress import Suppression


def deployment(object_annotation: str = "", template_annotation: str = "", image_line: str = "") -> str:
    def annotations(value: str, indent: str) -> str:
        return f"{indent}annotations:\n{indent}  gpustack.io/ignore: {value}\n" if value else ""

    return (
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        "metadata:\n"
        "  name: web\n"
        + annotations(object_annotation, "  ")
        + "spec:\n"
        "  template:\n"
        "    metadata:\n"
        "      labels: {app: web}\n"
        + annotations(template_annotation, "      ")
        + "    spec:\n"
        "      containers:\n"
        "        - name: app\n"
        + (image_line or "          image: app:latest\n")
    )


def outcome(text: str, config: Config = Config()) -> tuple[list[str], list[Suppression], list[Note]]:
    report = run(("d.yaml", text), config=config)
    return (
        [f.rule for f in report.findings],
        [item.suppression for item in report.suppressed],
        list(report.notes),
    )


@pytest.mark.parametrize(
    ("value", "suppression"),
    [
        ('"GS900"', Suppression("GS900", "annotation")),
        ('"GS901,GS900"', Suppression("GS900", "annotation")),
        ('"GS901, GS900"', Suppression("GS900", "annotation")),
        ('"GS900: pinned by the registry mirror"', Suppression("GS900", "annotation", "pinned by the registry mirror")),
        (
            '"GS900: mirror pins it; until 2026-12-31"',
            Suppression("GS900", "annotation", "mirror pins it", date(2026, 12, 31)),
        ),
        ('"GS900: until 2026-06-01"', Suppression("GS900", "annotation", None, date(2026, 6, 1))),
        ('|\n      GS901: other\n      GS900: second line', Suppression("GS900", "annotation", "second line")),
    ],
)
def test_annotation_forms_on_the_object(value: str, suppression: Suppression) -> None:
    assert outcome(deployment(object_annotation=value)) == ([], [suppression], [])


def test_annotation_on_the_pod_template() -> None:
    assert outcome(deployment(template_annotation='"GS900: r"')) == ([], [Suppression("GS900", "annotation", "r")], [])


def test_a_template_annotation_covers_only_its_own_template() -> None:
    text = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: train}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        metadata:
          annotations: {gpustack.io/ignore: GS900}
        spec:
          containers: [{name: m, image: "t:latest"}]
    Worker:
      template:
        spec:
          containers: [{name: w, image: "t:latest"}]
"""
    report = run(("j.yaml", text))
    assert [(f.rule, f.line) for f in report.findings] == [("GS900", 15)]
    assert [item.finding.line for item in report.suppressed] == [11]


@pytest.mark.parametrize("value", ['"gs900"', '"GS90"', '"GS9000"', '"GS900x"', '"GS900;GS901"', '"all"'])
def test_matching_is_exact_and_unreadable_entries_are_noted(value: str) -> None:
    rules, suppressed, notes = outcome(deployment(object_annotation=value))
    assert (rules, suppressed) == (["GS900"], [])
    assert [(n.file, n.line) for n in notes] == [("d.yaml", 6)]
    assert notes[0].message.startswith("Deployment web: gpustack.io/ignore: cannot read")


def test_an_unknown_rule_is_noted() -> None:
    rules, _, notes = outcome(deployment(object_annotation='"GS999"'))
    assert rules == ["GS900"]
    assert notes == [
        Note("Deployment web: gpustack.io/ignore: unknown rule GS999 (`gpustack rules` lists them)", "d.yaml", 6)
    ]


def test_an_expired_suppression_stops_suppressing_and_says_so() -> None:
    rules, suppressed, notes = outcome(deployment(object_annotation='"GS900: temporary; until 2026-05-31"'))
    assert (rules, suppressed) == (["GS900"], [])
    assert notes == [
        Note(
            "the annotation suppressing GS900 on Deployment web expired on 2026-05-31; the finding is reported again",
            "d.yaml",
            14,
        )
    ]


def test_an_invalid_date_is_noted() -> None:
    rules, _, notes = outcome(deployment(object_annotation='"GS900: x; until 2026-02-30"'))
    assert rules == ["GS900"]
    assert "cannot read the date" in notes[0].message


def test_comment_on_the_line_and_alone_on_the_line_above() -> None:
    same_line = deployment(image_line="          image: app:latest  # gpustack:ignore GS900\n")
    line_above = deployment(image_line="          # gpustack:ignore GS900: pinned elsewhere\n          image: app:latest\n")
    assert outcome(same_line) == ([], [Suppression("GS900", "comment")], [])
    assert outcome(line_above) == ([], [Suppression("GS900", "comment", "pinned elsewhere")], [])


def test_a_trailing_comment_on_the_line_above_covers_only_its_own_line() -> None:
    text = deployment(image_line="          env: []  # gpustack:ignore GS900\n          image: app:latest\n")
    assert outcome(text)[:2] == (["GS900"], [])


def test_a_comment_for_another_rule_suppresses_nothing() -> None:
    assert outcome(deployment(image_line="          image: app:latest  # gpustack:ignore GS901\n"))[:2] == (["GS900"], [])


def test_audit_reports_everything_and_counts_what_was_hidden() -> None:
    rules, suppressed, notes = outcome(deployment(object_annotation='"GS900"'), Config(suppressions=False))
    assert (rules, suppressed) == (["GS900"], [])
    assert notes == [Note("suppressions are off (audit): 1 reported finding(s) would be suppressed")]


def test_an_annotation_that_is_not_a_string_is_noted() -> None:
    rules, _, notes = outcome(deployment(object_annotation="[GS900]"))
    assert rules == ["GS900"]
    assert notes[0].message == (
        'Deployment web: gpustack.io/ignore must be a string like "GS001,GS004" or "GS004: reason; until 2027-03-31"'
    )
