"""The linter's values as the cache and worker processes carry them, and how they sort."""

from __future__ import annotations

import random

import pytest

from gpustack.lint.context import LintContext
from gpustack.lint.input.load import load_text
from gpustack.lint.model import (
    FINDING_ORDER,
    AppendItem,
    DeleteKey,
    Finding,
    ObjectRef,
    RenameKey,
    SetValue,
    Severity,
    finding_of,
    plain_finding,
)

FINDINGS = [
    Finding("a.yaml", 3, 5, "GS004", "missing-runtime-class", Severity.ERROR, "no runtimeClassName"),
    Finding(
        "b.yaml", 12, 1, "GS023", "gpu-container-hardening", Severity.INFO, "hardening",
        object=ObjectRef("apps/v1", "Deployment", "ml", "vllm"), path=("spec", "template"), fix="Set it.",
        fixable=True, document=2,
        edits=(SetValue(("a",), {"b": [1, None]}), AppendItem(("c",), "d"), DeleteKey(("e", 0)), RenameKey(("f",), "g")),
        root="clusters/prod",
    ),
    Finding("b.yaml", 12, 1, "GS001", "pci-0300-selector", Severity.WARNING, "selector", object=ObjectRef(kind="Pod")),
]


@pytest.mark.parametrize("finding", FINDINGS, ids=["bare", "every field", "partial object"])
def test_a_finding_as_plain_data_and_back_is_the_same_finding(finding: Finding) -> None:
    import marshal

    again = finding_of(marshal.loads(marshal.dumps(plain_finding(finding))))
    assert again == finding and vars(again) == vars(finding)
    assert again.severity is finding.severity and hash(again) == hash(finding)


def test_findings_sort_by_their_key_as_by_their_order() -> None:
    shuffled = [
        Finding(file, line, column, rule, "name", Severity.INFO, "message")
        for file in ("b.yaml", "a.yaml") for line in (10, 2) for column in (3, 1) for rule in ("GS010", "GS002")
    ]
    random.Random(7).shuffle(shuffled)
    assert sorted(shuffled, key=FINDING_ORDER) == sorted(shuffled)


def test_objects_of_some_kinds_come_in_input_order() -> None:
    text = "\n---\n".join(
        f"apiVersion: v1\nkind: {kind}\nmetadata: {{name: n{index}}}"
        for index, kind in enumerate(["Pod", "ConfigMap", "Service", "Pod", "ConfigMap"])
    )
    resources = load_text("a.yaml", text).resources
    ctx = LintContext(resources=resources, pod_specs=())
    assert [r.ref.name for r in ctx.of_kind("ConfigMap", "Pod")] == ["n0", "n1", "n3", "n4"]
    assert [r.ref.name for r in ctx.of_kind("Pod")] == ["n0", "n3"]
    assert ctx.of_kind("Namespace") == []


def test_what_is_derived_from_a_pod_spec_is_computed_once_per_pod_and_argument() -> None:
    from gpustack.lint.facts.podspec import extract_pod_specs

    (resource,) = load_text("p.yaml", "apiVersion: v1\nkind: Pod\nspec: {containers: [{name: c}]}\n").resources
    (pod,) = extract_pod_specs(resource)
    calls: list[object] = []

    def names(pod_spec: object, *over: object) -> tuple[object, ...]:
        calls.append(over)
        return over

    first, second = ["a"], ["a"]  # equal, but other objects: compared by identity
    assert pod.derived(names, first) is pod.derived(names, first) and calls == [(first,)]
    assert pod.derived(names, second) == (second,) and calls == [(first,), (second,)]
    assert pod.derived(names) == () and len(calls) == 3
    (again,) = extract_pod_specs(resource)  # another pod spec computes its own
    again.derived(names, first)
    assert len(calls) == 4


def test_objects_built_without_init_have_every_field() -> None:
    """Resources, pod specs and hits restored from the cache are built field by field
    (``copied``): each must carry all of its class's fields, or a new field would be missing."""
    from dataclasses import fields

    from gpustack.lint.facts.podspec import extract_pod_specs, facts, restore
    from gpustack.lint.input.units import restored_results

    text = "apiVersion: v1\nkind: List\nitems:\n  - {apiVersion: v1, kind: Pod, spec: {containers: [{name: c}]}}\n"
    (resource,) = load_text("l.yaml", text).resources
    (pod,) = extract_pod_specs(resource)
    restored = restore(resource, facts(pod))
    ((hit, _),) = restored_results([resource], [(0, ("spec",), plain_finding(FINDINGS[0]))])
    for made in (resource, restored, hit):
        assert {item.name for item in fields(made)} <= set(vars(made)), type(made).__name__
    assert restored == pod and resource.document_path == ("items", 0) and resource.locate(("spec",)) == (4, 33)
