"""Pod specs built from chart values (app-template, k8s-at-home common): every pod rule sees
them, findings point at the values keys, fixes land there, end to end through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lint_support import gpustack, write

from gpustack.lint.context import LintContext
from gpustack.lint.facts.valuepods import value_workloads
from gpustack.lint.input.load import load_text
from gpustack.lint.releases import dispatch

FIXTURES = Path(__file__).resolve().parents[1] / "rules" / "fixtures"
APP_TEMPLATE = (FIXTURES / "GS004" / "fires-app-template-k3s.yaml").read_text("utf-8")


def _workloads(text: str) -> list[dict]:  # type: ignore[type-arg]
    resources = load_text("hr.yaml", text).resources
    [release] = [r for r in dispatch.releases(LintContext(resources=resources, pod_specs=())) if r.chart]
    return [dict(workload.data) for workload in value_workloads(release)]


def test_app_template_controllers_become_workloads_named_as_the_chart_names_them() -> None:
    ollama, webui = _workloads(APP_TEMPLATE)
    assert (ollama["kind"], ollama["metadata"]) == ("Deployment", {"name": "ollama-ollama", "namespace": "ai"})
    pod = ollama["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"feature.node.kubernetes.io/pci-0300_10de.present": "true"}  # defaultPodOptions
    [container] = pod["containers"]
    assert container["image"] == "docker.io/ollama/ollama:0.6.5"
    assert container["env"] == [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}, {"name": "OLLAMA_HOST", "value": "0.0.0.0"}]
    assert webui["spec"]["template"]["spec"]["securityContext"] == {"runAsNonRoot": True}


def test_cronjob_controller_and_host_path_empty_dir_and_existing_claim_persistence() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: smi, namespace: argocd}
spec:
  source:
    chart: app-template
    repoURL: https://bjw-s-labs.github.io/helm-charts
    targetRevision: 3.7.3
    helm:
      valuesObject:
        controllers:
          smi:
            type: cronjob
            containers:
              app: {image: {repository: nvidia/cuda, tag: 12.9.1-base-ubuntu24.04}, command: nvidia-smi}
        persistence:
          dev:
            type: hostPath
            hostPath: /dev/nvidia0
            advancedMounts:
              smi:
                app: [{path: /dev/nvidia0, readOnly: true}]
          shm: {type: emptyDir, medium: Memory, globalMounts: [{path: /dev/shm}]}
          cache: {type: emptyDir}
          models: {type: persistentVolumeClaim, existingClaim: models}
"""
    [cronjob] = _workloads(text)
    pod = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["volumes"] == [
        {"name": "dev", "hostPath": {"path": "/dev/nvidia0"}},
        {"name": "shm", "emptyDir": {"medium": "Memory"}},
        {"name": "cache", "emptyDir": {}},
        {"name": "models", "persistentVolumeClaim": {"claimName": "models"}},
    ]
    assert pod["containers"][0]["volumeMounts"] == [
        {"name": "dev", "mountPath": "/dev/nvidia0", "readOnly": True},
        {"name": "shm", "mountPath": "/dev/shm", "readOnly": False},
        {"name": "cache", "mountPath": "/cache", "readOnly": False},
        {"name": "models", "mountPath": "/models", "readOnly": False},
    ]
    assert pod["containers"][0]["command"] == ["nvidia-smi"]


def test_findings_point_at_values_keys_through_the_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    file = write(str(tmp_path / "hr.yaml"), APP_TEMPLATE)
    code, out, _ = gpustack(capsys, "lint", "--distribution", "k3s", "--format", "json", file)
    found = {(f["rule"], f["line"]) for f in json.loads(out)["findings"]}
    assert code == 1
    assert found == {("GS001", 18), ("GS004", 20), ("GS007", 27), ("GS002", 30)}
    # GS023 is opt-in: the config turns it on, and it points at the values key too.
    write(str(tmp_path / ".gpustack.yaml"), "rules: {GS023: on}\n")
    code, out, _ = gpustack(capsys, "lint", "--distribution", "k3s", "--format", "json", file)
    found = {(f["rule"], f["line"]) for f in json.loads(out)["findings"]}
    assert found == {("GS001", 18), ("GS004", 20), ("GS007", 27), ("GS023", 29), ("GS002", 30)}


def test_fix_adds_the_runtime_class_to_the_controllers_pod_options(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    file = write(str(tmp_path / "hr.yaml"), APP_TEMPLATE)
    gpustack(capsys, "lint", "--distribution", "k3s", "--fix", file)
    fixed = Path(file).read_text()
    assert "        pod:\n          runtimeClassName: nvidia\n      webui:" in fixed
    code, out, _ = gpustack(capsys, "lint", "--distribution", "k3s", "--format", "json", file)
    assert "GS004" not in {f["rule"] for f in json.loads(out)["findings"]}


def test_values_in_a_yaml_string_are_located_but_never_edited(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: jellyfin, namespace: argocd}
spec:
  source:
    chart: app-template
    repoURL: https://bjw-s-labs.github.io/helm-charts
    targetRevision: 3.7.3
    helm:
      values: |
        controllers:
          main:
            containers:
              main:
                image: {repository: jellyfin/jellyfin, tag: 10.10.7}
                resources: {limits: {nvidia.com/gpu: 1}}
"""
    file = write(str(tmp_path / "app.yaml"), text)
    code, out, _ = gpustack(capsys, "lint", "--distribution", "k3s", "--format", "json", file)
    [finding] = [f for f in json.loads(out)["findings"] if f["rule"] == "GS004"]
    assert (finding["line"], finding["fixable"]) == (12, False)


def _probes(version: str, controller: str, values: str = "") -> set[str]:
    text = f"""\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {{name: llm, namespace: ai}}
spec:
  chart: {{spec: {{chart: app-template, version: "{version}", sourceRef: {{kind: HelmRepository, name: bjw-s}}}}}}
  values:
    controllers:
      {controller}:
        containers:
          main:
            image: {{repository: vllm/vllm-openai, tag: v0.10.0}}
            {values}
"""
    [workload] = _workloads(text)
    [container] = workload["spec"]["template"]["spec"]["containers"]
    return {key for key in container if key.endswith("Probe")}


def test_probes_render_as_the_chart_version_renders_them() -> None:
    every = {"livenessProbe", "readinessProbe", "startupProbe"}
    assert _probes("2.6.0", "main") == every  # common 2.x defaults, controller main's container main
    assert _probes("2.6.0", "vllm") == set()
    assert _probes("3.7.3", "main") == set()  # off unless enabled from 3.0
    assert _probes("", "main") == every  # unknown version: the defaults may apply
    assert _probes("2.6.0", "main", "probes: {readiness: {enabled: false}}") == {"livenessProbe", "startupProbe"}
    custom = "probes: {readiness: {enabled: true, custom: true, spec: {httpGet: {path: /health, port: 8000}}}}"
    assert _probes("4.6.2", "main", custom) == {"readinessProbe"}
    [workload] = _workloads(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: llm}\nspec:\n"
        "  chart: {spec: {chart: app-template, version: 4.6.2}}\n  values:\n    controllers:\n      main:\n"
        "        containers:\n          main:\n            image: vllm/vllm-openai\n            " + custom + "\n"
    )
    [container] = workload["spec"]["template"]["spec"]["containers"]
    assert container["readinessProbe"] == {"httpGet": {"path": "/health", "port": 8000}}


def test_deployments_get_the_charts_default_strategy_and_the_values_replicas_and_rolling_update() -> None:
    text = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: llm, namespace: ai}
spec:
  chart: {spec: {chart: app-template, version: 4.2.0, sourceRef: {kind: HelmRepository, name: bjw-s}}}
  values:
    controllers:
      quiet:
        containers: {app: {image: {repository: docker.io/ollama/ollama, tag: 0.12.3}}}
      rolling:
        replicas: 2
        strategy: RollingUpdate
        rollingUpdate: {unavailable: 1}
        containers: {app: {image: {repository: docker.io/ollama/ollama, tag: 0.12.3}}}
"""
    quiet, rolling = _workloads(text)
    assert quiet["spec"]["strategy"] == {"type": "Recreate"}  # bjw-s common's default
    assert "replicas" not in quiet["spec"]
    assert rolling["spec"]["replicas"] == 2
    assert rolling["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}
