"""GitOps delivery: K3s HelmCharts and the Argo CD app-of-apps, validated against the CRDs."""

from __future__ import annotations

import pytest
from crd_support import assert_valid, custom_resources
from ruamel.yaml import YAML

from gpustack.render import crd_schemas
from gpustack.render.component import HelmRelease
from gpustack.render.components import gitops

ARGOCD = {"argocd": {"enabled": True, "repoURL": "https://git.example.com/stacks.git", "targetRevision": "main",
                     "project": "gpu"}}
# A Git host other than GitHub or GitLab needs the README's page for the alerts' runbook links.
RUNBOOKS = {"alerts": {"runbookBaseUrl": "https://git.example.com/stacks/src/branch/main/output/test/README.md"}}


def delivery(rendered, prefix):
    return {path: objs for path, objs in rendered.delivery.items() if path.startswith(prefix)}


def test_every_custom_resource_validates(examples, render_spec):
    results = [*examples.values(), render_spec(monitoring=RUNBOOKS, gitops=ARGOCD)]
    kinds = set()
    for rendered, _ in results:
        for _, obj in custom_resources(rendered.objects()):
            assert_valid(obj)
            kinds.add(obj["kind"])
    assert kinds == {"PrometheusRule", "HelmChart", "Application"}


def test_k3s_gets_one_helm_chart_per_release(render_spec):
    rendered, tree = render_spec()
    charts = delivery(rendered, "k3s/")
    assert set(charts) == {f"k3s/{r.name}.yaml" for r in rendered.releases}
    for r in rendered.releases:
        [chart] = charts[f"k3s/{r.name}.yaml"]
        assert chart["metadata"] == {"name": r.name, "namespace": "kube-system"}
        spec = chart["spec"]
        assert (spec["chart"], spec["repo"], spec["version"], spec["targetNamespace"]) == (
            r.chart, r.repo, r.version, r.namespace
        )
        assert spec["createNamespace"] is True
        assert YAML(typ="safe").load(spec["valuesContent"]) == YAML(typ="safe").load(
            tree[f"helm/{r.name}.values.yaml"]
        )


@pytest.mark.parametrize(
    ("distribution", "setting", "expected"),
    [("k3s", None, True), ("kubeadm", None, False), ("k3s", False, False), ("kubeadm", True, True)],
)
def test_k3s_helm_charts_default_to_the_distribution(render_spec, distribution, setting, expected):
    rendered, _ = render_spec(cluster={"distribution": distribution}, gitops={"k3sHelmCharts": setting})
    assert bool(delivery(rendered, "k3s/")) is expected


def test_charts_kept_in_git_are_left_out_of_k3s(render_spec):
    rendered, _ = render_spec()
    from_git = HelmRelease(name="from-git", chart="c", repo="https://git.example.com/c.git", version="main",
                           namespace="n", values={}, path="chart/c")
    from_repo = rendered.releases[0]
    assert list(gitops.k3s_helm_charts(rendered.ctx, [from_git, from_repo], {})) == [f"k3s/{from_repo.name}.yaml"]


def test_argocd_app_of_apps(render_spec):
    rendered, tree = render_spec(monitoring=RUNBOOKS, gitops=ARGOCD)
    apps = delivery(rendered, "argocd/")
    [root] = apps.pop("argocd/root.yaml")
    assert root["spec"]["source"] == {"repoURL": "https://git.example.com/stacks.git", "targetRevision": "main",
                                      "path": "output/test/argocd/apps"}
    assert "finalizers" not in root["metadata"] and root["spec"]["project"] == "gpu"
    [manifests] = apps.pop("argocd/apps/manifests.yaml")
    assert manifests["spec"]["source"]["path"] == "output/test/manifests"
    assert set(apps) == {f"argocd/apps/{r.name}.yaml" for r in rendered.releases}
    waves = []
    for r in rendered.releases:
        [app] = apps[f"argocd/apps/{r.name}.yaml"]
        assert app["metadata"]["name"] == f"test-{r.name}"
        assert app["metadata"]["namespace"] == "argocd"
        assert app["metadata"]["annotations"] == {gitops.SYNC_WAVE: str(r.wave)}
        source = app["spec"]["source"]
        assert (source["repoURL"], source["chart"], source["targetRevision"]) == (r.repo, r.chart, r.version)
        assert source["helm"] == {"releaseName": r.name, "valuesObject": dict(r.values)}
        assert app["spec"]["destination"]["namespace"] == r.namespace
        creates = "CreateNamespace=true" in app["spec"]["syncPolicy"]["syncOptions"]
        assert creates is (r.namespace != "kube-system")
        waves.append(r.wave)
    # CRD-bearing and node-labelling charts first, the device plugins and exporter after them.
    assert min(waves) == 0 and max(waves) == 1
    assert int(manifests["metadata"]["annotations"][gitops.SYNC_WAVE]) == max(waves) + 1
    # Argo CD's own sources only: no config management plugin, whose image nothing builds.
    assert "argocd/plugin.yaml" not in tree and "ConfigManagementPlugin" not in "".join(tree.values())
    assert "there is no config management plugin" in tree["README.md"]


def test_git_charts_become_git_sources(examples):
    rendered, _ = examples["dra-hami"]
    [app] = rendered.delivery["argocd/apps/hami-dra-driver.yaml"]
    source = app["spec"]["source"]
    assert source["repoURL"] == "https://github.com/Project-HAMi/k8s-dra-driver.git"
    assert source["path"] == "chart/hami-dra-driver" and "chart" not in source


def test_no_argocd_no_applications(render_spec):
    rendered, tree = render_spec()
    assert not delivery(rendered, "argocd/")
    assert not [path for path in tree if path.startswith("argocd/")]


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "helm.cattle.io/v1", "kind": "HelmChart", "metadata": {"name": "x", "namespace": "kube-system"},
         "spec": {"repo": "https://charts.example.com"}},
        {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "x", "namespace": "argocd"},
         "spec": {"project": "default", "destination": {"server": "https://kubernetes.default.svc"},
                  "source": {"repoURL": "https://g.example.com/r.git", "chart": "c", "path": "p"}}},
        {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "metadata": {"name": "x", "namespace": "m"},
         "spec": {"groups": [{"name": "g", "rules": [{"alert": "A", "record": "b", "expr": "up"}]}]}},
        {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "metadata": {"name": "x", "namespace": "m"},
         "spec": {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "up", "for": "5 minutes"}]}]}},
    ],
    ids=["helmchart-without-chart", "application-chart-and-path", "rule-alert-and-record", "rule-bad-duration"],
)
def test_own_schemas_refuse_what_the_api_would(obj):
    assert crd_schemas.problems(obj)


def children(rendered):
    """The Applications the root syncs, by file."""
    return {path: objs[0] for path, objs in rendered.delivery.items() if path.startswith("argocd/apps/")}


def argocd_results(examples, render_spec):
    return [result for result in examples.values() if result[0].ctx.stack.spec.gitops.argocd.enabled] + [
        render_spec(monitoring=RUNBOOKS, gitops=ARGOCD, sharing={"hami": {"enabled": True}},
                    devicePlugin={"enabled": False},
                    workloads=[{"type": "smokeTest", "namespace": "smoke"}])
    ]


def test_every_child_retries_with_backoff_and_skips_the_dry_run_of_missing_kinds(examples, render_spec):
    for rendered, _ in argocd_results(examples, render_spec):
        for path, app in children(rendered).items():
            policy = app["spec"]["syncPolicy"]
            assert policy["retry"]["limit"] > 0 and policy["retry"]["backoff"]["factor"] > 1, path
            # Children hold custom resources of CRDs that other children install (the manifests
            # Application's PrometheusRule, the exporters' ServiceMonitors): no wave waits for health.
            assert "SkipDryRunOnMissingResource=true" in policy["syncOptions"], path
            # Safe defaults: nothing deleted by a sync or with an Application, drift reverted.
            assert policy["automated"] == {"prune": False, "selfHeal": True}
            assert "finalizers" not in app["metadata"], path


def test_pruning_and_cascading_deletion_are_the_specs_choice(render_spec):
    rendered, files = render_spec(monitoring=RUNBOOKS, gitops={"argocd": {**ARGOCD["argocd"], "prune": True,
                                                                           "selfHeal": False, "cascadeDelete": True}})
    for path, app in children(rendered).items():
        assert app["spec"]["syncPolicy"]["automated"] == {"prune": True, "selfHeal": False}, path
        assert app["metadata"]["finalizers"] == ["resources-finalizer.argocd.argoproj.io"], path
    # The root never cascades: deleting it leaves every child Application and the stack.
    assert "finalizers" not in rendered.delivery["argocd/root.yaml"][0]["metadata"]
    assert "deleting a child Application, or the root pruning one, deletes" in files["README.md"]
    _, files = render_spec(monitoring=RUNBOOKS, gitops=ARGOCD)
    assert "deleting the root or any child Application leaves the GPU stack running" in files["README.md"]


def identity(obj):
    return (obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else "", obj["kind"],
            obj["metadata"].get("namespace"), obj["metadata"]["name"])


def created_namespaces(apps):
    """Namespaces that chart Applications create (CreateNamespace), with the labels they set."""
    return {
        app["spec"]["destination"]["namespace"]: app["spec"]["syncPolicy"].get("managedNamespaceMetadata", {})
        for app in apps
        if "CreateNamespace=true" in app["spec"]["syncPolicy"].get("syncOptions", [])
    }


def assert_owned_once(objects, apps):
    ids = [identity(obj) for obj in objects]
    assert len(ids) == len(set(ids)), "an object emitted twice"
    namespaces = {name for _, kind, _, name in ids if kind == "Namespace"}
    assert not namespaces & set(created_namespaces(apps)), "a namespace both emitted and created by an Application"


def test_argocd_owns_every_object_once(examples, render_spec):
    for rendered, _ in argocd_results(examples, render_spec):
        # Git: the root owns argocd/apps, the manifests Application manifests/, chart Applications their namespace.
        apps = list(children(rendered).values())
        git_owned = apps + [obj for objs in rendered.manifests.values() for obj in objs]
        assert_owned_once(git_owned, apps)
        # Every release's namespace is created by its Application with the Pod Security labels the
        # pipeline gives it (helm/namespaces.yaml): privileged, or baseline for the monitoring namespace.
        owned = {r.namespace for r in rendered.releases} - {"kube-system"}
        expected = {ns["metadata"]["name"]: ns["metadata"]["labels"] for ns in rendered.namespaces}
        for namespace in owned:
            assert created_namespaces(apps)[namespace]["labels"] == expected[namespace]
        monitoring = rendered.ctx.stack.spec.monitoring.namespace
        assert expected[monitoring]["pod-security.kubernetes.io/enforce"] == "baseline"
        assert owned == set(created_namespaces(apps))


def test_the_stream_is_every_object_with_the_release_namespaces_first(render_spec):
    from gpustack.render import app as pipeline

    rendered, _ = render_spec()
    stream = list(pipeline.stream_objects(rendered))
    assert stream == [obj for _, obj in rendered.objects()]
    assert [o["metadata"]["name"] for o in stream if o["kind"] == "Namespace"] == sorted(
        {r.namespace for r in rendered.releases} - {"kube-system"}
    )
    assert stream[0]["kind"] == "Namespace"


def test_git_sourced_charts_are_pinned_to_a_tag(examples):
    rendered, _ = examples["dra-hami"]
    [app] = rendered.delivery["argocd/apps/hami-dra-driver.yaml"]
    assert app["spec"]["source"]["targetRevision"] == "v0.1.0"


def test_argocd_applications_get_the_stacks_own_project_unless_one_is_named(render_spec):
    """Not ``default`` (any repository, any namespace): an AppProject listing the stack's
    repositories and namespaces, applied before the root; a named project is the user's own."""
    argocd = {"argocd": {"enabled": True, "repoURL": "https://git.example.com/stacks.git"}}
    rendered, tree = render_spec(monitoring=RUNBOOKS, gitops=argocd, workloads=[{"type": "nbody", "namespace": "bench"}])
    [project, root] = rendered.delivery["argocd/root.yaml"]
    assert project["kind"] == "AppProject" and project["metadata"] == {"name": "test", "namespace": "argocd"}
    assert root["spec"]["project"] == "test" and root["spec"]["source"]["targetRevision"] == "main"
    assert set(project["spec"]["sourceRepos"]) == {"https://git.example.com/stacks.git", *(r.repo for r in rendered.releases)}
    namespaces = {d["namespace"] for d in project["spec"]["destinations"]}
    assert {"argocd", "default", "kube-system", "bench", *(r.namespace for r in rendered.releases)} == namespaces
    assert {d["server"] for d in project["spec"]["destinations"]} == {"https://kubernetes.default.svc"}
    assert "AppProject `test` first" in tree["README.md"]
    named, _ = render_spec(monitoring=RUNBOOKS, gitops={"argocd": {**argocd["argocd"], "project": "gpu"}})
    [root] = named.delivery["argocd/root.yaml"]
    assert root["kind"] == "Application" and root["spec"]["project"] == "gpu"
