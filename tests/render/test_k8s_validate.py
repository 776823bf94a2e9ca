"""Every rendered Kubernetes object validates (kubernetes-validate, strict) for its target version."""

from __future__ import annotations

import kubernetes_validate

from gpustack.render import k8s_validate

VARIANTS = {
    "kubeadm-host": {"cluster": {"distribution": "kubeadm", "kubernetesVersion": "1.34"}},
    "operator": {
        "gpuOperator": {"enabled": True},
        "nodePools": [{"name": "a", "gpu": {"model": "H100"}, "driver": {"source": "operator"}}],
    },
}


def all_objects(examples, render_spec):
    for rendered, _ in examples.values():
        yield rendered.ctx.stack.spec.cluster.minor, list(rendered.objects())
    for spec in VARIANTS.values():
        rendered, _ = render_spec(**spec)
        yield rendered.ctx.stack.spec.cluster.minor, list(rendered.objects())


def test_every_object_validates_strictly(examples, render_spec):
    cross_checked = set()
    for minor, objects in all_objects(examples, render_spec):
        for where, obj in objects:
            assert k8s_validate.problems(obj, minor=minor, where=where) == []
            key = (obj["apiVersion"], obj["kind"], minor)
            if key in cross_checked:
                continue
            # The library's own (uncached, ~11 ms) entry point agrees, once per kind and version.
            try:
                kubernetes_validate.validate(obj, f"1.{minor}", strict=True)
            except kubernetes_validate.SchemaNotFoundError:
                continue
            cross_checked.add(key)
    assert {"Namespace", "RuntimeClass"} <= {kind for _, kind, _ in cross_checked}


def test_violations_are_reported_with_object_and_path():
    bad = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"}, "handlr": "x"}
    problems = k8s_validate.problems(bad, minor=36, where="manifests/runtime.yaml")
    messages = sorted(p.message for p in problems)
    assert messages == [
        "RuntimeClass nvidia: 'handler' is a required property",
        "RuntimeClass nvidia: Additional properties are not allowed ('handlr' was unexpected)",
    ]
    assert {p.file for p in problems} == {"manifests/runtime.yaml"}


def test_unknown_custom_resources_are_skipped():
    crd = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "x"}, "spec": {"any": 1}}
    assert k8s_validate.problems(crd, minor=36, where="manifests/x.yaml") == []


def test_newest_schema_not_newer_than_the_target():
    assert k8s_validate.schema_version(35).startswith("1.35")
    newest = kubernetes_validate.utils.latest_version()
    assert k8s_validate.schema_version(99) == newest
