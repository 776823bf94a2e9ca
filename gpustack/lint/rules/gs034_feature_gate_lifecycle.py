"""GS034: a feature gate that a component refuses, or that no component reading it gets.

Kubernetes components exit at start on a gate they do not know (removed, or not yet added)
and on a GA or deprecated gate locked to the other value (``cannot set feature gate … to
false, feature is locked to true``). Gates are read per component: a gate
set only on components that do not read it changes nothing, and kubeadm's own
``ClusterConfiguration.featureGates`` refuses Kubernetes' component gates. Setting
``DRAConsumableCapacity=true`` on all four control-plane flags of K3s 1.36 is fine: they start.
Stages come from ``gpustack.spec.featuregates`` (one table for the renderer and the linter);
the version from ``--kubernetes-version``, the spec, or the set (``clusterconfig``).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.clusterconfig import KUBEADM, GateSetting, gate_settings, kubernetes_version
from gpustack.lint.model import Hit, Severity
from gpustack.lint.registry import Rule


def check(ctx: LintContext) -> Iterator[Hit]:
    settings = list(gate_settings(ctx.resources))
    if not settings:
        return
    from gpustack.spec.featuregates import GATES, gate_problems  # only for a set that sets gates
    cluster = kubernetes_version(ctx)
    readers: dict[str, set[str]] = {}
    for setting in settings:
        readers.setdefault(setting.gate, set()).add(setting.component)
    for setting in settings:
        gate = GATES.get(setting.gate)
        if gate is None:
            continue
        if setting.component == KUBEADM:
            yield _hit(
                setting,
                f"{setting.where} sets {setting.gate} in kubeadm's own featureGates: kubeadm refuses "
                "Kubernetes component gates",
                "Pass it to the components: `apiServer.extraArgs`, `scheduler.extraArgs`, … "
                "(`{name: feature-gates, value: …}`) and a KubeletConfiguration's `featureGates`.",
            )
            continue
        if cluster is not None:
            for _, problem in gate_problems(minor=cluster.minor, gates={setting.gate: setting.value}):
                yield _hit(
                    setting,
                    f"{setting.where}: {setting.component}: {problem} (version from {cluster.source})",
                    f"Remove {setting.gate} from the {setting.component} flags for Kubernetes 1.{cluster.minor}.",
                )
        if not readers[setting.gate] & set(gate.components):
            others = sorted(readers[setting.gate])
            yield _hit(
                setting,
                f"{setting.where} sets {setting.gate} only on {', '.join(others)}, which "
                f"{'does' if len(others) == 1 else 'do'} not read it: it takes effect on {', '.join(gate.components)}",
                f"Set it on {', '.join(gate.components)}.",
                Severity.WARNING,
            )


def _hit(setting: GateSetting, message: str, fix: str, severity: Severity | None = None) -> Hit:
    return Hit(setting.resource, setting.path, message, severity=severity, fix=fix)


RULE = Rule("GS034", "set", check)
