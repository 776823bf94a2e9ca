"""Cross-field checks of a Talos cluster, and of Talos fields elsewhere.

Talos's root filesystem is read-only and it has no package manager or shell: the driver and the
container toolkit come from system extensions of the installer image (``gpustack.spec.talos``),
so what a pool pins or installs on other distributions is refused here, each with what to do.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.spec import talos
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool
from gpustack.spec.pool_checks import Finding
from gpustack.spec.pools import gpu_model

TALOS_FIELDS = ("modules", "branch")
# Labels a kubelet may put on its own Node under the NodeRestriction admission plugin, which Talos
# always enables and through which it applies machine.nodeLabels: the kubernetes.io and k8s.io
# namespaces are refused but for these
# (https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#noderestriction).
_SELF_LABELS = frozenset({
    "kubernetes.io/hostname", "kubernetes.io/arch", "kubernetes.io/os", "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type", "failure-domain.beta.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/region", "topology.kubernetes.io/zone",
})
_SELF_PREFIXES = ("kubelet.kubernetes.io/", "node.kubernetes.io/")


def _pool_path(index: int, *rest: str) -> tuple[str | int, ...]:
    return ("spec", "nodePools", index, *rest)


def check_talos(stack: GpuStack) -> Iterator[Finding]:
    cluster = stack.spec.cluster
    if cluster.distribution != "talos":
        yield from _talos_fields_elsewhere(stack)
        return
    yield from _release(stack)
    for i, pool in enumerate(stack.spec.nodePools):
        yield from _pool(stack, i, pool)
    for section, pools in (("nodePools", stack.spec.nodePools), ("systemPools", stack.spec.systemPools)):
        for i, pool in enumerate(pools):
            yield from _restricted_labels(section, i, pool.name, pool.labels)


def _restricted_labels(section: str, index: int, name: str, labels: dict[str, str]) -> Iterator[Finding]:
    for key in labels:
        namespace = key.partition("/")[0] if "/" in key else ""
        restricted = namespace.endswith(("kubernetes.io", "k8s.io"))
        if restricted and key not in _SELF_LABELS and not key.startswith(_SELF_PREFIXES):
            yield ("spec", section, index, "labels", key), (
                f"pool {name!r}: Talos labels its nodes with their own credentials, and the API server's "
                f"NodeRestriction plugin refuses {key} from a node (kubernetes.io and k8s.io labels but a few): "
                "use a label of your own namespace, or set it with kubectl after the node joins"
            )


def _talos_fields_elsewhere(stack: GpuStack) -> Iterator[Finding]:
    distribution = stack.spec.cluster.distribution
    if stack.spec.cluster.talosVersion is not None:
        yield ("spec", "cluster", "talosVersion"), (
            f"talosVersion is for distribution talos; this cluster is {distribution}: remove it"
        )
    for i, pool in enumerate(stack.spec.nodePools):
        for field in TALOS_FIELDS:
            if getattr(pool.driver, field) is not None:
                yield _pool_path(i, "driver", field), (
                    f"driver.{field} chooses Talos's NVIDIA system extensions; on {distribution} remove it "
                    "(driver.version picks the driver package there)"
                )


def _release(stack: GpuStack) -> Iterator[Finding]:
    cluster = stack.spec.cluster
    path = ("spec", "cluster", "talosVersion")
    if cluster.talosVersion is None:
        yield ("spec", "cluster"), (
            "distribution talos needs cluster.talosVersion, e.g. v1.13.0: the NVIDIA system extensions are "
            "built per Talos release, and the installer image names it"
        )
        return
    minor = talos.talos_minor(cluster.talosVersion)
    if minor not in talos.KUBERNETES_BY_TALOS:
        yield path, (
            f"gpustack renders for Talos v1.{talos.OLDEST_TALOS} to v1.{talos.NEWEST_TALOS} "
            f"(containerd 2's CRI drop-in, an nvidia-container-toolkit extension that carries the toolkit), not "
            f"{cluster.talosVersion}: pick a release in that range"
        )
        return
    oldest, newest = talos.KUBERNETES_BY_TALOS[minor]
    if not oldest <= cluster.minor <= newest:
        yield ("spec", "cluster", "kubernetesVersion"), (
            f"Talos v1.{minor} runs Kubernetes 1.{oldest} to 1.{newest}, not {cluster.kubernetesVersion}: change "
            "kubernetesVersion or talosVersion"
        )


def _pool(stack: GpuStack, i: int, pool: NodePool) -> Iterator[Finding]:
    name = pool.name
    if pool.driver.source == "operator":
        yield _pool_path(i, "driver", "source"), (
            f"pool {name!r}: the GPU Operator's driver container cannot build and load the driver on Talos's "
            "read-only root; Talos brings it as a system extension: set driver.source: host (the default)"
        )
    if pool.driver.version is not None:
        yield _pool_path(i, "driver", "version"), (
            f"pool {name!r}: on Talos the release fixes the NVIDIA extensions' driver release; remove "
            "driver.version and choose driver.branch (production or lts)"
        )
    if pool.toolkit.version is not None:
        yield _pool_path(i, "toolkit", "version"), (
            f"pool {name!r}: on Talos the toolkit is the nvidia-container-toolkit system extension of the Talos "
            "release, nothing to pin: remove toolkit.version"
        )
    if pool.toolkit.mode != "auto":
        yield _pool_path(i, "toolkit", "mode"), (
            f"pool {name!r}: the Talos toolkit extension configures the toolkit itself, and the read-only root "
            "leaves nothing to change: remove toolkit.mode"
        )
    if pool.mig is not None and not stack.spec.gpuOperator.enabled:
        yield _pool_path(i, "mig"), (
            f"pool {name!r}: Talos has no shell to run nvidia-mig-parted on; enable the GPU Operator (its MIG "
            "manager applies the layout) or remove mig"
        )
    architecture = gpu_model(pool).architecture
    if pool.driver.modules == "open" and architecture not in talos.OPEN_FROM:
        yield _pool_path(i, "driver", "modules"), (
            f"pool {name!r}: NVIDIA's open kernel modules run on Turing and newer GPUs, {pool.gpu.model} is "
            f"{architecture}: use modules: proprietary"
        )
    if pool.driver.modules == "proprietary" and architecture in talos.OPEN_ONLY:
        yield _pool_path(i, "driver", "modules"), (
            f"pool {name!r}: {pool.gpu.model} ({architecture}) runs only NVIDIA's open kernel modules: use "
            "modules: open (or leave it out)"
        )
