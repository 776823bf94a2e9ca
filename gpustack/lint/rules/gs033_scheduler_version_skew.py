"""GS033: HAMi's kube-scheduler image of another minor version than the cluster's.

HAMi runs its own kube-scheduler beside its extender. Kubernetes' version skew policy lets
kube-scheduler be at most one minor version older than kube-apiserver and never newer; outside
that it may miss or misread API fields. HAMi's chart derives the tag from the cluster when it is
left empty (``scheduler.kubeScheduler.image.tag``, ``imageTag`` before chart v2.7.0),
so a pin (v1.33.0 on a 1.36 cluster, say) is what skews. A pin under the key the chart version
ignores is reported too: GS031 says the key is wrong, and fixing only the key would start a
skewed scheduler. The cluster's version comes from ``--kubernetes-version``, the spec, or a
kubeadm ClusterConfiguration or K3s upgrade Plan in the set.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.charts import chartkeys
from gpustack.lint.context import LintContext
from gpustack.lint.facts import registered
from gpustack.lint.facts.clusterconfig import kubernetes_version, minor_of
from gpustack.lint.model import Hit, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch
from gpustack.lint.releases.release import HelmChartRelease



def _hami() -> str:
    """HAMi's chart, the registry's GPU sharing chart."""
    return registered.chart_of_role("gpu-sharing")


def check(ctx: LintContext) -> Iterator[Hit]:
    cluster = kubernetes_version(ctx)
    if cluster is None:
        return
    for release in dispatch.releases(ctx):
        if release.chart != _hami():
            continue
        for rename in chartkeys.renames(release.chart):
            if rename.new[-1] != "tag":
                continue
            for keys in (rename.new, rename.old):
                tag = get_value(release.values, *keys)
                minor = minor_of(tag)
                if minor is None or cluster.minor - 1 <= minor <= cluster.minor:
                    continue
                skew = "newer than" if minor > cluster.minor else f"{cluster.minor - minor} minor versions behind"
                ignored = _ignored(release, keys, rename)
                resource, path = release.where(*keys)
                yield Hit(
                    resource,
                    path,
                    f"{release.owner} pins HAMi's kube-scheduler to {tag}, {skew} the cluster's "
                    f"Kubernetes 1.{cluster.minor} (from {cluster.source}): kube-scheduler may be at most "
                    f"one minor version older than the API server{ignored}",
                    fix=f"Leave `{'.'.join(rename.new)}` empty (the chart uses the cluster's version) "
                    f"or pin a v1.{cluster.minor} patch release.",
                )


def _ignored(release: HelmChartRelease, keys: tuple[str, ...], rename: chartkeys.Rename) -> str:
    """A note when this chart version ignores the key the pin is under."""
    if release.version is None:
        return ""
    newer = chartkeys.version_key(release.version) >= chartkeys.version_key(rename.since)
    if (keys == rename.old) == newer:
        return f" (chart {release.version} ignores `{'.'.join(keys)}`; moving the pin to the right key would run it)"
    return ""


RULE = Rule("GS033", "set", check)
