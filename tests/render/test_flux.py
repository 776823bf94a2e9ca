"""Flux delivery (gitops.flux): the flux/ folder's layers, sources, HelmReleases and README notes.
Flux's own code checks the objects in tests/flux (API types, CRDs, the dependsOn order)."""

from __future__ import annotations

from render_helpers import REPO
from ruamel.yaml import YAML

from gpustack.render import app
from gpustack.render.component import RenderContext
from gpustack.render.components import flux
from gpustack.render.rendered import EARLY_MANIFESTS
from gpustack.spec.load import load_spec

FLUX = {"flux": {"enabled": True}}


def yaml_load(text):
    return YAML(typ="safe").load(text)


def flux_stack(example):
    """An example delivered by Flux instead of what its spec says."""
    stack = load_spec(str(example)).stack
    gitops = stack.spec.gitops.model_copy(update={"argocd": stack.spec.gitops.argocd.model_copy(update={"enabled": False}),
                                                  "flux": stack.spec.gitops.flux.model_copy(update={"enabled": True})})
    return stack.model_copy(update={"spec": stack.spec.model_copy(update={"gitops": gitops})})


def flux_files(rendered):
    return {path: objs for path, objs in rendered.delivery.items() if path.startswith("flux/")}


def by_kind(rendered, kind):
    return {o["metadata"]["name"]: o for objs in flux_files(rendered).values() for o in objs if o["kind"] == kind}


def test_no_flux_no_flux_folder(render_spec):
    rendered, tree = render_spec()
    assert not flux_files(rendered)
    assert not any(path.startswith("flux/") for path in tree)


def test_the_entry_file_chains_the_layers(render_spec):
    rendered, tree = render_spec(gitops=FLUX)
    layers = {k["metadata"]["name"]: k["spec"] for k in rendered.delivery[flux.ENTRY_PATH]}
    assert list(layers) == ["test-prerequisites", "test-sources", "test-releases", "test-manifests"]
    assert [d["name"] for d in layers["test-releases"]["dependsOn"]] == ["test-prerequisites", "test-sources"]
    assert [d["name"] for d in layers["test-manifests"]["dependsOn"]] == ["test-releases"]
    assert layers["test-manifests"]["path"] == "./output/test/flux/manifests"
    for spec in layers.values():
        assert spec["wait"] is True and spec["prune"] is True
        assert spec["sourceRef"] == {"kind": "GitRepository", "name": "flux-system", "namespace": "flux-system"}
    for layer in flux.LAYERS:
        assert f"flux/{layer}/kustomization.yaml" in tree
    # manifests/ split: what the charts' pods need first (namespaces, a RuntimeClass), the rest last.
    early = yaml_load(tree["flux/prerequisites/kustomization.yaml"])["resources"]
    late = yaml_load(tree["flux/manifests/kustomization.yaml"])["resources"]
    early.remove("namespaces.yaml")
    assert set(early) <= {f"../../manifests/{name}.yaml" for name in EARLY_MANIFESTS}
    assert sorted(early + late) == sorted(f"../../manifests/{name}.yaml" for name in rendered.manifests)


def test_k3s_delivers_by_flux_alone(render_spec):
    rendered, _ = render_spec(gitops=FLUX)  # the minimal spec is K3s: HelmCharts default off with Flux
    assert not [path for path in rendered.delivery if path.startswith("k3s/")]


def test_releases_follow_the_waves_and_name_their_sources(render_spec):
    rendered, _ = render_spec(gitops=FLUX)
    releases = by_kind(rendered, "HelmRelease")
    sources = {**by_kind(rendered, "HelmRepository"), **by_kind(rendered, "OCIRepository")}
    assert releases
    for r in rendered.releases:
        spec = releases[f"test-{r.name}"]["spec"]
        assert (spec["releaseName"], spec["targetNamespace"], spec["storageNamespace"]) == (r.name, r.namespace, r.namespace)
        assert spec["values"] == dict(r.values)
        chart = spec["chart"]["spec"]
        assert (chart["chart"], chart["version"]) == (r.chart, r.version)
        assert sources[chart["sourceRef"]["name"]]["spec"]["url"] == r.repo
        earlier = {f"test-{e.name}" for e in rendered.releases if e.wave == r.wave - 1}
        assert {d["name"] for d in spec.get("dependsOn", [])} == earlier
    exporter = releases["test-dcgm-exporter"]["spec"]
    assert {"name": "test-kube-prometheus-stack"} in exporter["dependsOn"]  # its ServiceMonitor needs the CRD


def test_crd_policies_follow_the_chart_registry(render_spec):
    rendered, _ = render_spec(gitops=FLUX)
    releases = by_kind(rendered, "HelmRelease")
    stack = releases["test-kube-prometheus-stack"]["spec"]
    assert (stack["install"]["crds"], stack["upgrade"]["crds"]) == ("Create", "CreateReplace")
    exporter = releases["test-dcgm-exporter"]["spec"]
    assert "crds" not in exporter["install"] and "crds" not in exporter["upgrade"]
    assert exporter["install"]["remediation"] == {"retries": 3}
    assert exporter["upgrade"]["remediation"] == {"retries": 3, "strategy": "rollback"}


def test_chart_ref_only_where_the_chart_is_published_as_oci(render_spec):
    rendered, _ = render_spec(gitops={"flux": {"enabled": True, "chartReference": "chartRef"}})
    releases = by_kind(rendered, "HelmRelease")
    oci = by_kind(rendered, "OCIRepository")
    stack = releases["test-kube-prometheus-stack"]["spec"]
    assert "chart" not in stack
    source = oci[stack["chartRef"]["name"]]["spec"]
    assert source["url"] == "oci://ghcr.io/prometheus-community/charts/kube-prometheus-stack"
    assert source["ref"] == {"tag": "88.5.3"}
    assert source["layerSelector"]["operation"] == "copy"
    assert releases["test-dcgm-exporter"]["spec"]["chart"]["spec"]["sourceRef"]["kind"] == "HelmRepository"


def test_values_from_a_config_map(render_spec):
    rendered, _ = render_spec(gitops={"flux": {"enabled": True, "values": "configMap"}})
    [config_map, release] = rendered.delivery["flux/releases/dcgm-exporter.yaml"]
    assert "values" not in release["spec"]
    assert release["spec"]["valuesFrom"] == [
        {"kind": "ConfigMap", "name": "test-dcgm-exporter-values", "valuesKey": "values.yaml"}]
    assert config_map["metadata"]["labels"] == {"reconcile.fluxcd.io/watch": "Enabled"}
    assert "values.yaml" in config_map["data"]


def test_a_chart_kept_in_git_comes_from_a_git_repository():
    rendered = app.render(RenderContext(stack=flux_stack(REPO / "examples" / "dra-hami.yaml"), spec_file="dra-hami"))
    release = by_kind(rendered, "HelmRelease")["dra-hami-hami-dra-driver"]["spec"]["chart"]["spec"]
    assert release["chart"] == "./chart/hami-dra-driver" and "version" not in release
    git = by_kind(rendered, "GitRepository")[release["sourceRef"]["name"]]["spec"]
    assert git["url"] == "https://github.com/Project-HAMi/k8s-dra-driver.git"
    assert git["ref"] == {"tag": "v0.1.0"}


def test_namespaces_carry_pod_security_labels_and_are_never_pruned(render_spec):
    rendered, _ = render_spec(gitops=FLUX)
    namespaces = rendered.delivery["flux/prerequisites/namespaces.yaml"]
    assert {n["metadata"]["name"] for n in namespaces} == {r.namespace for r in rendered.releases} - {"kube-system"}
    levels = {n["metadata"]["name"]: n["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] for n in namespaces}
    # Node agents: privileged; kube-prometheus-stack without node-exporter: baseline.
    assert levels == {"monitoring": "baseline", "monitoring-agents": "privileged", "node-feature-discovery": "privileged"}
    for namespace in namespaces:
        assert namespace["metadata"]["annotations"] == {"kustomize.toolkit.fluxcd.io/prune": "disabled"}


def test_readme_says_how_to_bootstrap(render_spec):
    _, tree = render_spec(gitops={"flux": {"enabled": True, "path": "clusters/gpu/stack"}})
    readme = tree["README.md"]
    assert "flux bootstrap git" in readme
    assert "commit this folder at `clusters/gpu/stack`" in readme
    assert "`clusters/<cluster>/test.yaml`" in readme


def test_every_object_flux_applies_has_one_layer(examples):
    """What the layers apply (their folders and manifests/) holds no object twice, and no
    namespace both in the namespaces layer and in manifests/."""
    delivered = [(name, r) for name, r in examples.items() if r[0].ctx.stack.spec.gitops.flux.enabled]
    assert delivered
    for _, (rendered, _) in delivered:
        applied = [o for path, objs in flux_files(rendered).items() if path != flux.ENTRY_PATH for o in objs]
        applied += [o for objs in rendered.manifests.values() for o in objs]
        ids = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in applied]
        assert len(ids) == len(set(ids)), "an object applied by two layers"
