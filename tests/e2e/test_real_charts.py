"""Every example through the real upstream charts: valid objects, no ignored value, lint-clean.

The e2e tier (``pytest -m e2e``): needs ``helm`` and ../shared/reference/charts; skipped with
the reason when either is absent, failed instead in CI (``CI=true``, set by ``.ci/run``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from real_charts import (
    CrdSchemas,
    Helm,
    TemplateError,
    changed,
    leaves,
    objects,
    perturbed,
    volatile_lines,
    with_leaf,
)
from render_helpers import REPO, Result, cli, render_file

from gpustack.render import k8s_validate
from gpustack.render.component import HelmRelease
from gpustack.yamlio import dump

pytestmark = pytest.mark.e2e

WORKERS = max(2, os.cpu_count() or 2)


OUTPUTS: dict[tuple[Any, ...], Any] = {}  # examples share releases: each is templated once


def once(key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    if key not in OUTPUTS:
        OUTPUTS[key] = compute()
    return OUTPUTS[key]


def release_key(helm: Helm, release: HelmRelease) -> tuple[Any, ...]:
    return (helm, release.name, release.chart, release.version, release.namespace, dump(dict(release.values)))


def template(helm: Helm, release: HelmRelease, folder: Path, *, crds: bool = False) -> str:
    """The chart's output for the release's own values."""
    return once(("template", crds, *release_key(helm, release)), lambda: helm.template(release, release.values, folder, crds=crds))


@pytest.fixture(scope="session")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("helm")


def chart_objects(helm: Helm, rendered: Any, work: Path) -> Iterator[tuple[HelmRelease, dict[str, Any]]]:
    for release in rendered.releases:
        yield from ((release, obj) for obj in objects(template(helm, release, work, crds=True)))


def test_every_release_renders_through_its_chart_into_valid_objects(example: tuple[Result, Helm], work: Path):
    (rendered, _), helm = example
    schemas = CrdSchemas()
    schemas.add_upstream()
    pairs = list(chart_objects(helm, rendered, work))
    schemas.add(obj for _, obj in pairs)
    minor = rendered.ctx.stack.spec.cluster.minor
    found, unknown = [], set()
    everything = [(r.name, obj) for r, obj in pairs] + list(rendered.objects())
    for where, obj in everything:
        name = f"{where}: {obj['kind']} {obj['metadata'].get('name')}"
        if schemas.knows(obj):
            found += [f"{name}: {p}" for p in schemas.problems(obj)]
        elif k8s_validate._validator(obj["apiVersion"], obj["kind"], k8s_validate.schema_version(minor)):
            found += [f"{name}: {p.message} at {p.path}" for p in k8s_validate.problems(obj, minor=minor, where=where)]
        else:
            unknown.add(f"{obj['apiVersion']} {obj['kind']}")
    assert not unknown, f"kinds with no schema to check them: {sorted(unknown)}"
    assert not found, "\n".join(found)


def ignored_values(helm: Helm, release: HelmRelease, work: Path) -> list[str]:
    """The leaves of the release's values whose change leaves the chart's output as it was."""
    baseline = template(helm, release, work)
    volatile = volatile_lines(baseline, helm.template(release, release.values, work))

    def probe(path: tuple[str | int, ...], value: Any) -> str | None:
        try:
            output = helm.template(release, with_leaf(release.values, path, perturbed(value)), work)
        except TemplateError:
            return None  # the chart read the value and refused the changed one
        return None if changed(baseline, volatile, output) else ".".join(map(str, path))

    with ThreadPoolExecutor(WORKERS) as pool:
        results = pool.map(lambda leaf: probe(*leaf), list(leaves(release.values)))
    return [path for path in results if path]


def test_every_emitted_value_changes_the_chart_output(example: tuple[Result, Helm], work: Path):
    (rendered, _), helm = example
    ignored = [
        f"{release.chart} {release.version}: {path}"
        for release in rendered.releases
        for path in once(("ignored", *release_key(helm, release)), lambda r=release: ignored_values(helm, r, work))
    ]
    assert not ignored, "values the chart ignores (a change leaves its output as it was):\n" + "\n".join(ignored)


def test_what_the_stack_deploys_lints_clean(example: tuple[Result, Helm], work: Path, tmp_path: Path, capsys):
    """The objects a cluster ends up with: each chart's output and ``manifests/`` (the values files
    and delivery objects that produce the charts' output are linted in tests/render)."""
    (rendered, tree), helm = example
    deployed = tmp_path / "deployed"
    deployed.mkdir()
    for path, text in tree.items():
        if path.startswith("manifests/") and path != "manifests/kustomization.yaml":
            (deployed / path.removeprefix("manifests/")).write_text(text, encoding="utf-8")
    for release in rendered.releases:
        (deployed / f"chart-{release.name}.yaml").write_text(template(helm, release, work), encoding="utf-8")
    code, out, _ = cli(capsys, "lint", str(deployed), "--spec", rendered.ctx.spec_file, "--fail-on", "info")
    assert code == 0, out


def test_a_value_the_chart_does_not_read_is_reported(helm_binary: str, work: Path):
    from real_charts import CHARTS

    values = {"master": {"replicaCount": 2}, "gpustackUnread": {"enabled": True}}
    release = HelmRelease("nfd", "node-feature-discovery", str(CHARTS), "0.19.0", "nfd", values)
    assert ignored_values(Helm(helm_binary, 36), release, work) == ["gpustackUnread.enabled"]


def custom_kinds(objs: list[dict[str, Any]], minor: int) -> set[tuple[str, str]]:
    """(group, kind) of the custom resources among ``objs`` (kinds the Kubernetes API lacks)."""
    version = k8s_validate.schema_version(minor)
    return {
        (obj["apiVersion"].split("/")[0], obj["kind"])
        for obj in objs
        if obj["kind"] != "CustomResourceDefinition" and k8s_validate._validator(obj["apiVersion"], obj["kind"], version) is None
    }


def crd_kinds(objs: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(o["spec"]["group"], o["spec"]["names"]["kind"]) for o in objs if o["kind"] == "CustomResourceDefinition"}


def test_every_argocd_child_with_custom_resources_converges_without_a_health_checked_wave(
    example: tuple[Result, Helm], work: Path
):
    """gpustack renders no health check for Applications, so waves do not wait: a child holding
    custom resources whose CRDs come from another child must skip their dry run (and retry)."""
    (rendered, _), helm = example
    if not rendered.ctx.stack.spec.gitops.argocd.enabled:
        pytest.skip("no Argo CD delivery in this example")
    minor = rendered.ctx.stack.spec.cluster.minor
    held = {f"argocd/apps/{r.name}.yaml": objects(template(helm, r, work, crds=True)) for r in rendered.releases}
    held["argocd/apps/manifests.yaml"] = [obj for objs in rendered.manifests.values() for obj in objs]
    installed = set().union(*(crd_kinds(objs) for objs in held.values()))
    checked = 0
    for path, objs in held.items():
        [app] = rendered.delivery[path]
        policy = app["spec"]["syncPolicy"]
        assert policy["retry"]["limit"] > 0, path
        needed = custom_kinds(objs, minor) - crd_kinds(objs)
        assert needed <= installed, f"{path}: no child installs the CRDs of {sorted(needed - installed)}"
        if needed:
            checked += 1
            assert "SkipDryRunOnMissingResource=true" in policy["syncOptions"], f"{path} holds {sorted(needed)}"
    assert checked >= 1, "the manifests Application holds PrometheusRules of kube-prometheus-stack's CRDs"


# kube-prometheus-stack's control-plane jobs: Service suffix → (its Down alert, the port the
# component serves metrics on, the labels of kubeadm's static pod / kube-proxy DaemonSet).
CONTROL_PLANE = {
    "kube-controller-manager": ("KubeControllerManagerDown", 10257, {"component": "kube-controller-manager"}),
    "kube-scheduler": ("KubeSchedulerDown", 10259, {"component": "kube-scheduler"}),
    "kube-proxy": ("KubeProxyDown", 10249, {"k8s-app": "kube-proxy"}),
    "kube-etcd": ("etcdMembersDown", 2381, {"component": "etcd"}),
}


def kubeadm_binds(files: dict[str, str]) -> set[str]:
    """Components whose metrics the kubeadm configuration binds to every interface."""
    bound = set()
    for doc in objects(files["cluster/kubeadm-config.yaml"]):
        if doc["kind"] == "ClusterConfiguration":
            for section, name in (("controllerManager", "kube-controller-manager"), ("scheduler", "kube-scheduler")):
                if {"name": "bind-address", "value": "0.0.0.0"} in doc.get(section, {}).get("extraArgs", []):
                    bound.add(name)
            if {"name": "listen-metrics-urls", "value": "http://0.0.0.0:2381"} in doc.get("etcd", {}).get("local", {}).get("extraArgs", []):
                bound.add("kube-etcd")
        if doc["kind"] == "KubeProxyConfiguration" and doc.get("metricsBindAddress") == "0.0.0.0:10249":
            bound.add("kube-proxy")
    return bound


def k3s_binds(files: dict[str, str]) -> set[str]:
    config = objects(files["cluster/config.yaml"])[0] if objects(files["cluster/config.yaml"]) else {}
    wanted = {"kube-controller-manager": ("kube-controller-manager-arg", "bind-address=0.0.0.0"),
              "kube-scheduler": ("kube-scheduler-arg", "bind-address=0.0.0.0"),
              "kube-proxy": ("kube-proxy-arg", "metrics-bind-address=0.0.0.0")}
    return {name for name, (key, arg) in wanted.items() if arg in config.get(key, [])}


def test_control_plane_jobs_scrape_what_the_cluster_config_binds(example: tuple[Result, Helm], work: Path):
    """Each control-plane job kube-prometheus-stack keeps finds a bound endpoint, and each job it
    cannot scrape is off together with its Down alert (no critical alert from the first minute)."""
    (rendered, files), helm = example
    [kps] = [r for r in rendered.releases if r.chart == "kube-prometheus-stack"]
    output = objects(template(helm, kps, work))
    cluster = rendered.ctx.stack.spec.cluster
    kubeadm = cluster.distribution == "kubeadm"
    # Talos: gpustack's patches bind no control-plane metrics, so every job must be off.
    binds = {"kubeadm": kubeadm_binds, "k3s": k3s_binds}.get(cluster.distribution, lambda _: set())
    bound = binds(files)
    alerts = {r["alert"] for o in output if o["kind"] == "PrometheusRule" for g in o["spec"]["groups"]
              for r in g["rules"] if "alert" in r}
    for suffix, (alert, port, labels) in CONTROL_PLANE.items():
        name = f"{kps.name}-{suffix}"
        services = [o for o in output if o["kind"] == "Service" and o["metadata"]["name"] == name]
        if not services:
            assert alert not in alerts, f"{alert} without a {suffix} job"
            continue
        [service] = services
        assert alert in alerts
        assert suffix in bound, f"{suffix} is scraped but the cluster configuration leaves it on 127.0.0.1"
        assert [p["targetPort"] for p in service["spec"]["ports"]] == [port]
        if kubeadm:
            assert service["spec"]["selector"] == labels
        else:
            [endpoints] = [o for o in output if o["kind"] == "Endpoints" and o["metadata"]["name"] == name]
            [subset] = endpoints["subsets"]
            assert [a["ip"] for a in subset["addresses"]] == list(cluster.serverAddresses)
            assert [p["port"] for p in subset["ports"]] == [port]


def _images(objs: list[dict[str, Any]]) -> set[str]:
    found = set()
    for obj in objs:
        spec = obj.get("spec", {}).get("template", {}).get("spec", {})
        for container in [*spec.get("containers", []), *spec.get("initContainers", [])]:
            found.add(container["image"])
    return found


def test_hami_through_its_chart_keeps_its_webhook_and_pulls_no_mirror(helm_binary: str, work: Path):
    rendered, _ = render_file(REPO / "examples" / "hami-vllm.yaml")
    helm = Helm(helm_binary, rendered.ctx.stack.spec.cluster.minor)
    [release] = [r for r in rendered.releases if r.chart == "hami"]
    objs = objects(template(helm, release, work))
    webhooks = [o for o in objs if o["kind"] == "MutatingWebhookConfiguration"]
    assert [hook["name"] for o in webhooks for hook in o["webhooks"]] == ["vgpu.hami.io"]
    images = _images(objs)
    assert any(image.startswith("registry.k8s.io/kube-scheduler:") for image in images)
    assert "ghcr.io/jkroepke/kube-webhook-certgen:1.8.7" in images
    assert not [image for image in images if "aliyuncs" in image or "liangjw" in image or "jettech" in image]


def test_grafana_reads_the_generated_admin_secret_and_the_chart_makes_none(helm_binary: str, work: Path):
    rendered, _ = render_file(REPO / "examples" / "k3s-l4.yaml")
    helm = Helm(helm_binary, rendered.ctx.stack.spec.cluster.minor)
    [release] = [r for r in rendered.releases if r.chart == "kube-prometheus-stack"]
    objs = objects(template(helm, release, work))
    assert not [o for o in objs if o["kind"] == "Secret" and "admin-password" in o.get("data", {})]
    [grafana] = [o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("grafana")]
    env = {e["name"]: e for c in grafana["spec"]["template"]["spec"]["containers"] for e in c.get("env", [])}
    assert env["GF_SECURITY_ADMIN_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "grafana-admin", "key": "admin-password"}


def test_the_gpu_operator_chart_hands_the_driver_upgrade_policy_to_its_cluster_policy(helm_binary: str, work: Path):
    """The chart copies ``driver.upgradePolicy`` into the ClusterPolicy the operator reads, under
    the CRD's names (``gpuPodDeletion`` becomes ``podDeletion``)."""
    rendered, _ = render_file(REPO / "examples" / "kubeadm-gpu-operator.yaml")
    helm = Helm(helm_binary, rendered.ctx.stack.spec.cluster.minor)
    [release] = [r for r in rendered.releases if r.chart == "gpu-operator"]
    [policy] = [o for o in objects(template(helm, release, work)) if o["kind"] == "ClusterPolicy"]
    upgrade = policy["spec"]["driver"]["upgradePolicy"]
    assert upgrade["autoUpgrade"] is True and upgrade["maxParallelUpgrades"] == 1
    assert upgrade["waitForCompletion"] == {"podSelector": "batch.kubernetes.io/job-name", "timeoutSeconds": 0}
    assert upgrade["podDeletion"]["deleteEmptyDir"] is True and upgrade["podDeletion"]["force"] is False
    assert upgrade["drain"]["enable"] is False


def test_hami_publishes_no_node_port_and_its_clients_need_none(helm_binary: str, work: Path):
    """Without NodePorts the extender, the webhook and the monitor stay reachable: kube-scheduler
    calls the extender in its own pod, the API server the webhook through the Service, Prometheus
    the monitor through the Service's endpoints (by its port name)."""
    rendered, _ = render_file(REPO / "examples" / "hami-vllm.yaml")
    helm = Helm(helm_binary, rendered.ctx.stack.spec.cluster.minor)
    [release] = [r for r in rendered.releases if r.chart == "hami"]
    objs = objects(template(helm, release, work))
    services = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Service"}
    assert {s["spec"]["type"] for s in services.values()} == {"ClusterIP"}
    assert not [p for s in services.values() for p in s["spec"]["ports"] if "nodePort" in p]
    [config] = [o for o in objs if o["kind"] == "ConfigMap" and "config.yaml" in o.get("data", {})]
    [extender] = objects(config["data"]["config.yaml"])[0]["extenders"]
    assert extender["urlPrefix"] == "https://127.0.0.1:443"
    [webhook] = [h for o in objs if o["kind"] == "MutatingWebhookConfiguration" for h in o["webhooks"]]
    assert webhook["clientConfig"]["service"]["name"] in services
    [monitor] = [m for _, m in rendered.objects() if m["kind"] == "ServiceMonitor" and "vgpu" in m["metadata"]["name"]]
    wanted = monitor["spec"]["selector"]["matchLabels"].items()
    selected = [s for s in services.values() if wanted <= s["metadata"]["labels"].items()]
    assert [p["name"] for s in selected for p in s["spec"]["ports"]] == [monitor["spec"]["endpoints"][0]["port"]]


def test_hamis_dra_kubelet_plugin_requests_cpu_and_memory_in_every_container(helm_binary: str, work: Path):
    rendered, _ = render_file(REPO / "examples" / "dra-hami.yaml")
    helm = Helm(helm_binary, rendered.ctx.stack.spec.cluster.minor)
    [release] = [r for r in rendered.releases if r.chart == "hami-dra-driver"]
    [plugin] = [o for o in objects(template(helm, release, work)) if o["kind"] == "DaemonSet"]
    pod = plugin["spec"]["template"]["spec"]
    for container in [*pod["initContainers"], *pod["containers"]]:
        assert set(container.get("resources", {}).get("requests", {})) == {"cpu", "memory"}, container["name"]


@pytest.mark.parametrize("version", ["0.15.7", "0.19.0"])
def test_every_nfd_pod_gets_node_critical_priority_once(helm_binary: str, work: Path, tmp_path: Path, version: str):
    from render_helpers import write_spec

    rendered, _ = render_file(Path(write_spec(tmp_path, nfd={"version": version})))
    helm = Helm(helm_binary, rendered.ctx.stack.spec.cluster.minor)
    [release] = [r for r in rendered.releases if r.chart == "node-feature-discovery"]
    text = template(helm, release, work)
    priorities = {o["metadata"]["name"]: o["spec"]["template"]["spec"].get("priorityClassName")
                  for o in objects(text) if o["kind"] in ("DaemonSet", "Deployment")}
    # Before 0.16 the chart has a key for the worker only.
    covered = {name for name in priorities if version != "0.15.7" or name.endswith("-worker")}
    assert covered and {name: priorities[name] for name in covered} == dict.fromkeys(covered, "system-node-critical")
    for document in text.split("\n---"):
        assert document.count("priorityClassName:") <= 1, document


def test_the_stacks_argocd_project_admits_what_its_applications_deploy(example: tuple[Result, Helm], work: Path):
    """Argo CD refuses to sync an object from a repository or into a namespace its project does not
    list: every chart's objects (in the namespaces the templates name), the manifests and each
    Application's own source and destination fit the stack's AppProject."""
    (rendered, _), helm = example
    argocd = rendered.ctx.stack.spec.gitops.argocd
    if not argocd.enabled:
        pytest.skip("no Argo CD delivery in this example")
    [project, root] = rendered.delivery["argocd/root.yaml"]
    allowed = {d["namespace"] for d in project["spec"]["destinations"]}
    repos = set(project["spec"]["sourceRepos"])
    applications = [root, *(o for path, objs in rendered.delivery.items() if path.startswith("argocd/apps/") for o in objs)]
    for app in applications:
        assert app["spec"]["project"] == project["metadata"]["name"]
        assert app["spec"]["source"]["repoURL"] in repos
        assert app["spec"]["destination"]["namespace"] in allowed
    deployed = [(r.namespace, o) for r in rendered.releases for o in objects(template(helm, r, work))]
    deployed += [("default", o) for objs in rendered.manifests.values() for o in objs]
    outside = {f"{o['kind']} {o['metadata'].get('namespace')}" for default, o in deployed
               if o["metadata"].get("namespace", default) not in allowed}
    assert not outside, sorted(outside)
