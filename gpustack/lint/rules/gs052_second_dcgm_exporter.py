"""GS052: a second DCGM Exporter beside the GPU Operator's.

The GPU Operator deploys DCGM Exporter by default (``dcgmExporter.enabled: true`` in its chart
and ClusterPolicy) on every GPU node it labels ``nvidia.com/gpu.deploy.dcgm-exporter=true``. A
standalone exporter (the dcgm-exporter chart, a DaemonSet of its image) on the same nodes
exports every GPU series twice, under two jobs: sums and counts over GPUs double, alerts fire
twice, and both exporters hold DCGM's profiling counters, which only one reader gets at a time.

Quiet when the operator's exporter is off (``dcgmExporter.enabled: false``), when the two
cannot share a node (contradictory required node labels, ``placement``), for files a
Kustomization leaves out, and for values files whose chart only their path and keys tell
(nothing in the set installs them: a copy or an alternative is no second exporter), nor for
helm commands in guides and scripts (often alternatives to each other).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts import registered
from gpustack.lint.facts.clusterpolicy import cluster_policies
from gpustack.lint.facts.images import image_repository
from gpustack.lint.facts.operands import component_releases, exporter_charts
from gpustack.lint.facts.placement import Placement
from gpustack.lint.model import Hit, Path, PodSpec, Resource, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import deployed
from gpustack.lint.releases.commands import command_of

OPERAND = "dcgmExporter"
# The GPU Operator runs its exporter on the nodes it labels so (its state-dcgm-exporter DaemonSet).
OPERATOR_LABEL = "nvidia.com/gpu.deploy.dcgm-exporter"
_OPERATOR_PLACEMENT = {"nodeSelector": {OPERATOR_LABEL: "true"}}
_EXPORTER_IMAGE = "dcgm-exporter"  # the repository's last part: the hostengine's image is not one


@dataclass(frozen=True)
class Exporter:
    """One deployment of DCGM Exporter in the set."""

    name: str
    resource: Resource
    path: Path
    placement: Placement


def _placement(resource: Resource, path: Path, spec: Mapping[str, Any]) -> Placement:
    return Placement.of_pod(PodSpec(resource, path, dict(spec), {}, False, False))


def _operator_exporters(ctx: LintContext) -> Iterator[Exporter]:
    operator = registered.chart_of_role("gpu-operator")
    for release, _ in component_releases(ctx, exporter_charts(), OPERAND):
        if release.chart == operator and not release.inferred and command_of(release) is None:
            yield Exporter(str(release), release.resource, release.path, _placement(release.resource, release.path, _OPERATOR_PLACEMENT))
    for policy in cluster_policies(ctx):
        if get_value(policy.data, "spec", OPERAND, "enabled") is not False:
            yield Exporter(f"ClusterPolicy {policy.ref.name}", policy, ("spec",), _placement(policy, ("spec",), _OPERATOR_PLACEMENT))


def _standalone_exporters(ctx: LintContext) -> Iterator[Exporter]:
    operator = registered.chart_of_role("gpu-operator")
    for release, _ in component_releases(ctx, exporter_charts(), OPERAND):
        if release.chart != operator and not release.inferred and command_of(release) is None:
            own = {key: release.values[key] for key in ("nodeSelector", "affinity") if key in release.values}
            yield Exporter(str(release), release.resource, release.path, _placement(release.resource, release.path, own))
    for pod in ctx.pod_specs:
        if pod.resource.kind != "DaemonSet":
            continue
        for container in pod.containers():
            if image_repository(container.image).rsplit("/", 1)[-1] == _EXPORTER_IMAGE:
                yield Exporter(str(pod.resource.ref), pod.resource, (*container.path, "image"), Placement.of_pod(pod))
                break


def check(ctx: LintContext) -> Iterator[Hit]:
    left_out = deployed.left_out(ctx)
    operators = [e for e in _operator_exporters(ctx) if e.resource.file not in left_out]
    if not operators:
        return
    for exporter in _standalone_exporters(ctx):
        if exporter.resource.file in left_out:
            continue
        beside = next((op for op in operators if not op.placement.disjoint(exporter.placement)), None)
        if beside is None:
            continue
        yield Hit(
            exporter.resource,
            exporter.path,
            f"{exporter.name} runs DCGM Exporter beside the GPU Operator's ({beside.name} leaves "
            f"`{OPERAND}.enabled` on): every GPU series is exported twice, so sums over GPUs double and alerts "
            "fire twice",
            fix=f"Keep one: set `{OPERAND}.enabled: false` in the GPU Operator, or remove this exporter.",
        )


RULE = Rule("GS052", "set", check)
