"""Flux's dependsOn graph orders every custom resource after the release that installs its CRD and
everything after its namespace, with no cycle and no dangling reference (``graph.py``).

From the rendered output alone plus ``helm template`` of the packaged charts (the real upstream
charts, with the values the HelmReleases carry inline or in their ConfigMaps): every example that
enables Flux as committed, and every example rendered with Flux at its defaults. Then the same
check on graphs broken on purpose must fail.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster import deploy
from tests.flux import graph
from tests.flux.support import EXAMPLES, FLUX_EXAMPLES, REPO, documents, flux_files, flux_variant, require_charts, stack

pytestmark = pytest.mark.flux


def chart_objects(folder: Path, minor: str, scratch: Path) -> dict[str, list[dict[str, Any]]]:
    """HelmRelease name → ``helm template`` of its packaged chart with the values it carries."""
    objects = [doc for path in flux_files(folder) for doc in documents(path)]
    by_kind = {(o["kind"], o["metadata"]["name"]): o for o in objects}
    found = {}
    for release in (o for o in objects if o["kind"] == "HelmRelease"):
        spec = release["spec"]
        values = dict(spec.get("values", {}))
        for ref in spec.get("valuesFrom", []):
            values.update(yaml.safe_load(by_kind[(ref["kind"], ref["name"])]["data"][ref["valuesKey"]]) or {})
        chart, version = chart_of(spec, by_kind)
        values_file = scratch / f"{release['metadata']['name']}.values.yaml"
        values_file.write_text(yaml.safe_dump(values), encoding="utf-8")
        packaged = deploy.Release(spec["releaseName"], chart, version, spec["targetNamespace"], values_file)
        found[release["metadata"]["name"]] = deploy.helm_template(packaged, minor)
    return found


def chart_of(spec: dict[str, Any], by_kind: dict[tuple[str, str], dict[str, Any]]) -> tuple[str, str]:
    """The chart's name and version, as its source says."""
    if "chartRef" in spec:
        source = by_kind[(spec["chartRef"]["kind"], spec["chartRef"]["name"])]
        return source["spec"]["url"].rsplit("/", 1)[-1], source["spec"]["ref"]["tag"]
    chart = spec["chart"]["spec"]
    source = by_kind[(chart["sourceRef"]["kind"], chart["sourceRef"]["name"])]
    if source["kind"] == "GitRepository":
        return chart["chart"].rstrip("/").rsplit("/", 1)[-1], source["spec"]["ref"]["tag"]
    return chart["chart"], chart["version"]


def stack_graph(folder: Path, spec: Path, scratch: Path) -> tuple[graph.Graph, dict[tuple[str, str], str]]:
    require_charts()
    loaded = stack(spec)
    charts = chart_objects(folder, loaded.spec.cluster.kubernetesVersion, scratch)
    return graph.load(folder, loaded.spec.gitops.stack_path(loaded.metadata.name), charts), graph.crd_installers(charts)


@pytest.fixture(scope="module")
def committed(tmp_path_factory: pytest.TempPathFactory) -> tuple[graph.Graph, dict[tuple[str, str], str]]:
    """The first example that enables Flux, as committed: the graph the broken-graph tests break."""
    if not FLUX_EXAMPLES:
        pytest.skip("no example enables gitops.flux")
    example = FLUX_EXAMPLES[0]
    return stack_graph(REPO / "output" / example.stem, example, tmp_path_factory.mktemp("values"))


@pytest.mark.parametrize("example", FLUX_EXAMPLES, ids=[p.stem for p in FLUX_EXAMPLES])
def test_committed_flux_stacks_are_ordered(example, tmp_path):
    stack_graph_, crds = stack_graph(REPO / "output" / example.stem, example, tmp_path)
    assert stack_graph_.problems(crds) == []


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_delivered_by_flux_is_ordered(example, tmp_path):
    folder = flux_variant(example, tmp_path / "out")
    stack_graph_, crds = stack_graph(folder, example, tmp_path)
    assert stack_graph_.releases, "no HelmRelease rendered"
    assert stack_graph_.problems(crds) == []


def test_the_manifests_wait_for_the_releases_that_install_their_crds(committed):
    """Drop the manifests layer's dependsOn: its PrometheusRules and ServiceMonitors come unordered."""
    broken, crds = copy.deepcopy(committed)
    manifests = next(k for name, k in broken.kustomizations.items() if name.endswith("-manifests"))
    manifests.depends_on = []
    problems = broken.problems(crds)
    assert any("PrometheusRule" in p and "installs its CRD" in p for p in problems), problems


def test_the_releases_wait_for_their_namespaces(committed):
    broken, crds = copy.deepcopy(committed)
    releases = next(k for name, k in broken.kustomizations.items() if name.endswith("-releases"))
    releases.depends_on = [d for d in releases.depends_on if not d.endswith("-prerequisites")]
    problems = broken.problems(crds)
    assert any("its release is in namespace" in p for p in problems), problems


def test_a_layer_that_does_not_wait_orders_nothing(committed):
    broken, crds = copy.deepcopy(committed)
    next(k for name, k in broken.kustomizations.items() if name.endswith("-releases")).waits = False
    assert any("installs its CRD" in p for p in broken.problems(crds))


def test_a_release_installing_a_crd_another_uses_must_come_first(committed):
    """A CRD installer made to depend on a release that uses its CRD: a custom resource before its CRD."""
    broken, crds = copy.deepcopy(committed)
    installer = crds[("monitoring.coreos.com", "PrometheusRule")]
    user = next(name for name, r in broken.releases.items() if installer in r.depends_on)
    broken.releases[user].depends_on.remove(installer)
    crds = {**crds, ("monitoring.coreos.com", "ServiceMonitor"): installer}
    broken.releases[user].objects.append(
        {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": {"name": "probe"}})
    assert any("ServiceMonitor probe" in p for p in broken.problems(crds))


def test_a_cycle_and_a_dangling_reference_are_found(committed):
    broken, crds = copy.deepcopy(committed)
    first, second = list(broken.kustomizations)[:2]
    broken.kustomizations[first].depends_on.append(second)
    broken.kustomizations[second].depends_on.append(first)
    assert any("cycle" in p for p in broken.problems(crds))
    broken.kustomizations[first].depends_on = ["missing"]
    assert broken.problems(crds) == [f"{first} dependsOn missing, which does not exist"]


def test_pods_wait_for_the_runtime_class_the_stack_applies(tmp_path):
    """On a host-driver stack the device plugin's pods name RuntimeClass nvidia from manifests/:
    applied with the rest of manifests/, after the releases, they would be refused for ever."""
    example = REPO / "examples" / "kubeadm-host-driver.yaml"
    broken, crds = stack_graph(flux_variant(example, tmp_path / "out"), example, tmp_path)
    assert broken.problems(crds) == []
    prerequisites = next(k for name, k in broken.kustomizations.items() if name.endswith("-prerequisites"))
    manifests = next(k for name, k in broken.kustomizations.items() if name.endswith("-manifests"))
    runtime = [o for o in prerequisites.objects if o["kind"] == "RuntimeClass"]
    assert runtime
    prerequisites.objects = [o for o in prerequisites.objects if o["kind"] != "RuntimeClass"]
    manifests.objects += runtime
    assert any("names RuntimeClass nvidia" in p for p in broken.problems(crds))
