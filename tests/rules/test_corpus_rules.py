"""The pod-level rules on ../shared/corpus (470 real GPU manifests; skipped when absent).

Workload rules must never fire on GPU system components (held to what they need instead) nor
on pods that ask for zero GPUs. (Named apart from tests/benchmarks/test_corpus.py: test
modules share one namespace.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from podspec_support import extract_all

from gpustack.lint.context import LintContext
from gpustack.lint.facts.components import pod_components
from gpustack.lint.facts.quantities import is_gpu_resource, resource_amounts
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.rules import RULES

from lint_support import load_paths

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
WORKLOAD_RULES = ("GS002", "GS003", "GS004", "GS006", "GS007", "GS023")
# Files of upstream GPU system components (recognised by image in the code; by file here).
SYSTEM_FILES = (
    "NVIDIA__gpu-operator__assets__",
    "NVIDIA__k8s-device-plugin__deployments__static__",
    "NVIDIA__dcgm-exporter__",
    "NVIDIA__gpu-monitoring-tools__dcgm-exporter",
    "NVIDIA__mig-parted__deployments__",
    "Project-HAMi__k8s-dra-driver__chart__",
)


@pytest.fixture(scope="module")
def pods() -> tuple[PodSpec, ...]:
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} not present")
    loaded = load_paths([str(CORPUS)])
    # Keys given twice are reported but their objects read (tests/lint/test_lint_corpus.py).
    unreadable = [error for error in loaded.errors if not error.message.startswith("duplicate key ")]
    assert len(unreadable) <= 10, unreadable
    return extract_all(loaded.resources)


@pytest.fixture(scope="module")
def linted(pods: tuple[PodSpec, ...]) -> list[tuple[PodSpec, str, Hit]]:
    resources = tuple({id(p.resource): p.resource for p in pods}.values())
    return list(_pod_hits(pods, LintContext(resources, pods)))


def _pod_hits(pods: tuple[PodSpec, ...], ctx: LintContext) -> Iterator[tuple[PodSpec, str, Hit]]:
    for rule in RULES.values():
        if rule.scope != "pod":
            continue
        for pod in pods:
            if rule.applies_to(pod.resource.kind):
                for hit in rule.check(pod, ctx):
                    pod.resource.locate(hit.path)  # every path can be located
                    yield pod, rule.id, hit


def _asks_for_zero_gpus(pod: PodSpec) -> bool:
    return not pod.gpu_consumer and any(
        is_gpu_resource(a.name) and a.quantity == 0 for c in pod.containers() for a in resource_amounts(c)
    )


def test_upstream_system_components_are_recognised(pods: tuple[PodSpec, ...]) -> None:
    daemonsets = [
        pod
        for pod in pods
        if pod.resource.kind == "DaemonSet" and Path(pod.resource.file).name.startswith(SYSTEM_FILES)
    ]
    assert len(daemonsets) >= 25
    assert [str(p.resource.ref) for p in daemonsets if not p.system_component] == []


def test_no_workload_rule_on_system_components(linted: list[tuple[PodSpec, str, Hit]]) -> None:
    wrong = []
    for pod, rule, hit in linted:
        if not pod.system_component or rule not in WORKLOAD_RULES:
            continue
        # GS004 holds GPU system DaemonSets that read NVML to runtimeClassName (their need).
        needs_runtime = pod.resource.kind == "DaemonSet" and any(c.runtime_class for c in pod_components(pod))
        if rule == "GS004" and needs_runtime:
            continue
        wrong.append(f"{rule} {hit.resource.file}: {hit.message}")
    assert wrong == []


def test_no_workload_rule_on_pods_without_gpus(
    pods: tuple[PodSpec, ...], linted: list[tuple[PodSpec, str, Hit]]
) -> None:
    assert any(_asks_for_zero_gpus(pod) for pod in pods)  # the corpus holds the case
    wrong = [
        f"{rule} {hit.resource.file}: {hit.message}"
        for pod, rule, hit in linted
        if rule in WORKLOAD_RULES and not pod.gpu_consumer and not pod.system_component
    ]
    assert wrong == []
