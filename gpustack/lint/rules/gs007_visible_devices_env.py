"""GS007: ``NVIDIA_VISIBLE_DEVICES`` or ``CUDA_VISIBLE_DEVICES`` set by hand in a workload.

``NVIDIA_VISIBLE_DEVICES`` decides which GPUs the nvidia runtime injects. The device plugin
sets it to the UUIDs the scheduler allocated, and a value in the manifest comes
after the plugin's in the container's env, so it wins: ``all`` exposes every GPU of the node,
and ids are the node's GPUs, not the allocation's. In a pod that requests no GPU the
scheduler does not know about these GPUs at all. A list no longer than the request is a
warning: the runtime honours it, and it is right only if those happen to be the allocated
GPUs. ``void`` and ``none`` hide GPUs and are fine. With a spec, ``all`` (or more ids than the
request) is not reported when every pool the pod can land on has no more GPUs per node than it
requests, without MIG or HAMi: the node has nothing more to expose. Without a spec, how many
GPUs the nodes have is unknown: ``all`` beside a GPU request is info (on one-GPU nodes, which
most such sets run on, it grants nothing: judged on public repositories, the warning was right
once in ten); an error where the spec shows larger nodes, or where ids name more GPUs than
requested.

A CDI annotation (``cdi.k8s.io/*: nvidia.com/gpu=all``) makes a CDI-enabled runtime inject the
GPUs it names the same way, for the whole pod.

A values file that no release of the set takes and no chart gpustack knows fits (its chart
unknown, so nothing renders its pods) is still read for ``NVIDIA_VISIBLE_DEVICES: all`` in a
container's env (a list entry or an env map): info, since whether the container requests GPUs
is not known.

``CUDA_VISIBLE_DEVICES`` is read by CUDA inside the container, over the GPUs the container
was given, numbered from 0. Ordinals beyond the request do not exist (CUDA stops at the first
invalid one), UUIDs pin GPUs the allocation does not choose; a valid subset of the request
leaves allocated GPUs idle (a warning). GPU system components that must see every GPU are
exempt.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import (
    VISIBLE_DEVICES,
    CdiDevices,
    EnvVar,
    cdi_gpu_devices,
    env_vars,
    other_vendor_only,
    visible_devices,
)
from gpustack.lint.facts.podspec import subject
from gpustack.lint.facts.pools import ClusterFacts
from gpustack.lint.facts.quantities import gpu_requests, is_template_placeholder
from gpustack.lint.facts.scheduling import reachable_pools
from gpustack.lint.model import Container, Hit, Path, PodSpec, Resource, Severity
from gpustack.lint.registry import Rule

CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
FIX = (
    f"Remove {VISIBLE_DEVICES} and {CUDA_VISIBLE_DEVICES} from the env and request the GPUs "
    "through resources (or a claim); the device plugin exposes exactly the allocated GPUs."
)
CDI_FIX = ("Remove the CDI annotation and request the GPUs through resources (or a claim); the device plugin "
           "exposes exactly the allocated GPUs.")
# Resources whose count is the number of GPUs (or MIG devices) CUDA enumerates in the container.
_COUNTED = ("nvidia.com/gpu", "nvidia.com/gpu.shared")


def _requested(container: Container) -> Fraction | None:
    """GPUs (MIG devices) the container is given, 0 when none; None when not known."""
    total = Fraction(0)
    for name, amount in gpu_requests(container).items():
        if name in _COUNTED or name.startswith("nvidia.com/mig-"):
            if amount is None:
                return None
            total += amount
    return total


def _ids(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _plural(count: Fraction) -> str:
    return f"{count} GPU" if count == 1 else f"{count} GPUs"


def _nothing_more_to_expose(pod: PodSpec, requested: Fraction, cluster: ClusterFacts | None) -> bool:
    """Whether every pool the pod can land on has at most ``requested`` whole GPUs per node, none
    split by MIG or HAMi (where ``all`` reaches beyond the pod's slice): ``all`` adds nothing."""
    if cluster is None:
        return False
    pools = reachable_pools(pod, cluster)
    return bool(pools) and all(
        pool.gpus <= requested
        and not pool.sharing.hami
        and not (cluster.mig_strategy != "none" and pool.gpu.mig_capable)
        for pool in pools
    )


def _nvidia(
    pod: PodSpec,
    where: str,
    value: str,
    at: Path,
    requested: Fraction | None,
    cluster: ClusterFacts | None,
    by: str = "the nvidia runtime",
    fix: str = FIX,
) -> Hit | None:
    """The finding on GPUs named by hand (``value``: ``all`` or ids) at ``at``, which ``where``
    describes; ``by`` is what exposes them."""
    if pod.gpus_outside_scheduler:
        return Hit(
            pod.resource, at,
            f"{where} without requesting a GPU: {by} exposes these GPUs and the scheduler "
            "does not know about them",
            fix=fix,
        )
    ids = _ids(value)
    severity = None
    if value.strip().lower() == "all" or not requested or len(ids) > requested:
        if requested and _nothing_more_to_expose(pod, requested, cluster):
            return None
        if requested and cluster is None and len(ids) <= requested:  # "all", node size unknown
            severity = Severity.INFO
            why = (f" but requests {_plural(requested)}: on a node with more GPUs, {by} exposes"
                   " them all whatever the scheduler allocated")
        else:
            asks = f" but requests {_plural(requested)}" if requested else ""
            why = f"{asks}: {by} exposes these GPUs whatever the scheduler allocated"
    else:
        severity = Severity.WARNING
        why = (f" within its request of {_plural(requested)}: the runtime honours the list over the "
               "allocation, so the container gets these GPUs of the node, allocated to it or not")
    return Hit(pod.resource, at, where + why, severity=severity, fix=fix)


def _cdi(pod: PodSpec, cdi: CdiDevices, cluster: ClusterFacts | None) -> Hit | None:
    """A CDI annotation names GPUs for the whole pod, beside what its containers request."""
    asked = [_requested(container) for container in pod.containers(include_init=False)]
    requested = None if None in asked else sum((a for a in asked if a is not None), Fraction(0))
    where = f"{subject(pod)} names nvidia.com/gpu={cdi.devices} in its CDI annotation {cdi.key}"
    return _nvidia(pod, where, cdi.devices, cdi.path, requested, cluster, by="the container runtime's CDI injection",
                   fix=CDI_FIX)


def _cuda(pod: PodSpec, container: Container, var: EnvVar, requested: Fraction) -> Hit | None:
    value = (var.value or "").strip()
    ids = _ids(value)
    if not ids or ids == ["-1"]:
        return None  # hides every GPU: a choice
    where = f"{subject(pod, container)} sets {CUDA_VISIBLE_DEVICES}={value} but requests {_plural(requested)}"
    ordinals = [int(i) for i in ids if i.isdigit()]
    if len(ordinals) < len(ids):
        why = "CUDA numbers the container's allocated GPUs from 0, so GPU ids here pin GPUs the allocation does not choose"
    elif len(set(ordinals)) < len(ordinals):
        why = "an ordinal named twice makes CUDA ignore the list from there on"
    elif max(ordinals) >= requested:
        seen = "GPU 0" if requested == 1 else f"GPUs 0–{requested - 1}"
        why = f"the container sees {seen} only, and CUDA stops at the first ordinal it does not have"
    elif len(ordinals) < requested:
        return Hit(
            pod.resource, var.value_path,
            f"{where}: {_plural(requested - len(ordinals))} allocated to it "
            f"{'stays' if requested - len(ordinals) == 1 else 'stay'} idle",
            severity=Severity.WARNING,
            fix=f"Request as many GPUs as the container uses, or remove {CUDA_VISIBLE_DEVICES}.",
        )
    else:
        return None  # every allocated GPU, in some order
    return Hit(pod.resource, var.value_path, f"{where}: {why}", fix=FIX)


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if pod.system_component or other_vendor_only(pod):
        return  # another vendor's GPUs: NVIDIA's runtime, which reads these variables, is not used
    if (cdi := cdi_gpu_devices(pod)) and (hit := _cdi(pod, cdi, ctx.cluster)):
        yield hit
    for container in pod.containers():
        requested = _requested(container)
        var = visible_devices(container)
        if var is not None:
            where = f"{subject(pod, container)} sets {VISIBLE_DEVICES}={var.value}"
            if hit := _nvidia(pod, where, var.value or "", var.value_path, requested, ctx.cluster):
                yield hit
        cuda = next((v for v in env_vars(container) if v.name == CUDA_VISIBLE_DEVICES), None)
        if cuda is None or cuda.value is None or is_template_placeholder(cuda.value):
            continue
        if requested and (hit := _cuda(pod, container, cuda, requested)):
            yield hit


def check_values(ctx: LintContext) -> Iterator[Hit]:
    """``NVIDIA_VISIBLE_DEVICES: all`` in values files of charts nothing renders (the module docstring)."""
    from gpustack.lint.releases import dispatch
    from gpustack.lint.unread import untaken

    by_file: dict[str, list[Resource]] = {}
    with_objects = set()
    for resource in ctx.resources:
        if resource.kind is None:
            by_file.setdefault(resource.file, []).append(resource)
        else:
            with_objects.add(resource.file)
    for file in with_objects & by_file.keys():
        del by_file[file]  # a file with objects is no values file
    if not by_file:
        return
    _, files = untaken(by_file, dispatch.releases(ctx))
    for file, resources in files:
        for resource in resources:
            for path in _visible_all(resource.data, ()):
                yield Hit(
                    resource,
                    path,
                    f"values file {file} sets {VISIBLE_DEVICES}=all in a container's env (its chart unknown to gpustack): "
                    "under the nvidia runtime that container sees every GPU of its node whatever it requests, and "
                    "requesting none it uses GPUs the scheduler counts free",
                    severity=Severity.INFO,
                    fix=FIX,
                )


def _visible_all(value: Any, path: Path) -> Iterator[Path]:
    """Where a values tree sets NVIDIA_VISIBLE_DEVICES to all: ``{name: ..., value: all}`` or ``NVIDIA_VISIBLE_DEVICES: all``."""
    if isinstance(value, Mapping):
        if value.get("name") == VISIBLE_DEVICES and _all(value.get("value")):
            yield (*path, "value")
        for key, item in value.items():
            if key == VISIBLE_DEVICES and _all(item):
                yield (*path, key)
            elif isinstance(item, (Mapping, list)):
                yield from _visible_all(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _visible_all(item, (*path, index))


def _all(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() == "all"


RULE = Rule("GS007", "pod", check, values=check_values)
