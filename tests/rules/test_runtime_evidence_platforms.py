"""GS004 with evidence of the platform (OpenShift, Bottlerocket) and of Talos CRI drop-ins in
the wrong containerd table, beyond what the fixtures show."""

from __future__ import annotations

from tests.rules.test_runtime_evidence import GPU_POD

V2_TABLE = 'plugins."io.containerd.grpc.v1.cri".containerd'
V3_TABLE = 'plugins."io.containerd.cri.v1.runtime".containerd'


def _drop_in(table: str, runtime: str = "nvidia", release: str | None = None) -> str:
    install = f"  install:\n    image: ghcr.io/siderolabs/installer:{release}\n" if release else ""
    return f"""
machine:
{install}  files:
    - op: create
      path: /etc/cri/conf.d/20-customization.part
      content: |
        [{table}]
          default_runtime_name = "{runtime}"
"""


def _gs004(lint, *documents: str, distribution: str | None = None):  # type: ignore[no-untyped-def]
    return [r for r in lint("\n---\n".join(documents), distribution=distribution) if r.rule == "GS004"]


def test_without_context_the_finding_is_info_and_says_what_it_assumes(lint) -> None:  # type: ignore[no-untyped-def]
    [finding] = _gs004(lint, GPU_POD)
    assert finding.severity == "info"
    assert "assumed: the set names no distribution" in finding.message
    assert "OpenShift" in finding.message


def test_an_operatorhub_subscription_says_openshift(lint) -> None:  # type: ignore[no-untyped-def]
    subscription = """
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: { name: gpu-operator-certified, namespace: nvidia-gpu-operator }
spec:
  channel: stable
  name: gpu-operator-certified
  source: certified-operators
  sourceNamespace: openshift-marketplace
"""
    assert _gs004(lint, subscription, GPU_POD) == []


def test_an_olm_subscription_elsewhere_says_nothing(lint) -> None:  # type: ignore[no-untyped-def]
    subscription = """
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: { name: my-operator, namespace: operators }
spec:
  name: my-operator
  source: operatorhubio-catalog
  sourceNamespace: olm
"""
    assert [f.severity for f in _gs004(lint, subscription, GPU_POD)] == ["info"]


def test_the_gpu_operator_on_its_openshift_platform_says_openshift(lint) -> None:  # type: ignore[no-untyped-def]
    release = """
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: { name: gpu-operator, namespace: gpu-operator }
spec:
  chart:
    spec: { chart: gpu-operator, version: v24.9.2, sourceRef: { kind: HelmRepository, name: nvidia } }
  values:
    platform: { openshift: true }
    toolkit: { enabled: true, env: [{ name: CONTAINERD_SET_AS_DEFAULT, value: "false" }] }
"""
    assert _gs004(lint, release, GPU_POD) == []


def test_openshift_wins_over_containerd_settings(lint) -> None:  # type: ignore[no-untyped-def]
    route = """
apiVersion: route.openshift.io/v1
kind: Route
metadata: { name: web, namespace: apps }
spec: { to: { kind: Service, name: web } }
"""
    assert _gs004(lint, route, _drop_in(V3_TABLE, "runc"), GPU_POD) == []


def test_a_talos_release_before_containerd_2_makes_the_new_table_the_wrong_one(lint) -> None:  # type: ignore[no-untyped-def]
    findings = _gs004(lint, _drop_in(V3_TABLE, release="v1.7.6"), GPU_POD)
    assert [f.severity for f in findings] == ["error", "error"]
    assert f"under [{V3_TABLE}], a table containerd does not read under CRI config version 2 (Talos v1.7" in findings[0].message


def test_the_new_table_without_a_release_is_todays_talos(lint) -> None:  # type: ignore[no-untyped-def]
    assert _gs004(lint, _drop_in(V3_TABLE), GPU_POD) == []


def test_a_table_neither_version_reads_is_an_error_whatever_the_release(lint) -> None:  # type: ignore[no-untyped-def]
    findings = _gs004(lint, _drop_in("plugins.cri.containerd"), GPU_POD)
    assert [f.severity for f in findings] == ["error", "error"]
    assert "(any Talos release)" in findings[0].message


def test_runc_in_the_wrong_table_is_only_runc(lint) -> None:  # type: ignore[no-untyped-def]
    findings = _gs004(lint, _drop_in(V2_TABLE, "runc", release="v1.10.3"), GPU_POD)
    assert [f.severity for f in findings] == ["error"]  # the pod; the drop-in says what it means
    assert findings[0].line > 10


def test_talhelper_talos_version_names_the_release(lint) -> None:  # type: ignore[no-untyped-def]
    talconfig = f"""
clusterName: lab
talosVersion: v1.9.5
endpoint: https://10.0.0.10:6443
nodes:
  - hostname: gpu-1
    ipAddress: 10.0.0.21
    patches:
      - |-
        machine:
          files:
            - op: create
              path: /etc/cri/conf.d/20-customization.part
              content: |
                [{V2_TABLE}]
                  default_runtime_name = "nvidia"
"""
    findings = _gs004(lint, talconfig, GPU_POD)
    assert [f.severity for f in findings] == ["error", "error"]
    assert "Talos v1.9, per talhelper's talosVersion" in findings[0].message


def test_bottlerocket_for_a_gpu_provisioner_inline_provider(lint) -> None:  # type: ignore[no-untyped-def]
    provisioner = """
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata: { name: gpu }
spec:
  limits: { resources: { nvidia.com/gpu: 8 } }
  provider:
    amiFamily: Bottlerocket
    subnetSelector: { karpenter.sh/discovery: demo }
"""
    assert _gs004(lint, provisioner, GPU_POD) == []
