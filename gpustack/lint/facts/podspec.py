"""Pod specs in any kind of object, found by structure, and accessors rules share.

A pod spec is a mapping with a ``containers`` list of container mappings, wherever it sits:
a Pod's ``spec``, any ``template.spec`` (Deployment, StatefulSet, DaemonSet, Job, LeaderWorkerSet,
JobSet, Knative, Argo …), ``jobTemplate.spec.template.spec`` (CronJob), Ray head and worker
groups, Kubeflow ``*ReplicaSpecs``, Volcano tasks. Kind names are never consulted, so a custom
resource with a pod template is linted like a Deployment.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpustack.lint.facts.claims import ClaimIndex
from gpustack.lint.facts.commands import command_parts as command_parts  # re-exported for the rules
from gpustack.lint.facts.components import pod_components
from gpustack.lint.facts.consumers import gpus_reached, requests_gpus
from gpustack.lint.model import Container, Path, PodSpec, Resource, copied

# Deep enough for a JobSet in a Kubeflow TrainingRuntime (pod spec at depth 12); the node
# budget keeps a hostile document (wide or deep, aliases shared many times) cheap.
MAX_DEPTH = 24
MAX_NODES = 200_000
_SKIPPED_KEYS = frozenset({"metadata", "status"})
_SCALARS = frozenset({str, int, float, bool, type(None)})  # what the loader gives besides dicts and lists


def extract_pod_specs(resource: Resource, claims: ClaimIndex | None = None) -> list[PodSpec]:
    """Every pod spec inside ``resource``, in document order.

    ``claims`` resolves DRA claims to device classes; without it a pod with a claim counts
    as a GPU consumer (a claim that cannot be resolved). A pod that reaches GPUs
    without requesting any is a GPU consumer too, outside the scheduler.
    """
    found: list[tuple[Path, Mapping[str, Any], Mapping[str, Any]]] = []
    budget = [MAX_NODES]
    _walk(resource.data, (), resource.data, found, budget)
    pods = []
    for path, spec, metadata in found:
        pod = PodSpec(resource, path, spec, metadata, gpu_consumer=False, system_component=False)
        # Set on the draft itself (not a copy): its containers, and what was computed about
        # them to decide these two facts, stay cached for the rules.
        requested = requests_gpus(pod, claims)
        reached = gpus_reached(pod, (volume.host_path for volume in host_path_volumes(pod)))
        object.__setattr__(pod, "gpu_consumer", requested or reached is not None)
        object.__setattr__(pod, "gpus_outside_scheduler", None if requested else reached)
        object.__setattr__(pod, "system_component", bool(pod_components(pod)))
        pods.append(pod)
    return pods


# What extraction decided about a pod spec, as plain data (the lint cache keeps it): the path
# and the three facts ``extract_pod_specs`` computes. ``restore`` rebuilds the PodSpec.
Facts = tuple[Path, bool, bool, str | None]


def facts(pod: PodSpec) -> Facts:
    return pod.path, pod.gpu_consumer, pod.system_component, pod.gpus_outside_scheduler


def restore(resource: Resource, found: Facts) -> PodSpec:
    """The pod spec of ``resource`` that ``facts`` describes, without walking the object."""
    path, gpu_consumer, system_component, outside = found
    spec = resource.get(path)
    parent = resource.get(path[:-1])
    values = {
        "resource": resource,
        "path": path,
        "spec": spec,
        "template_metadata": _template_metadata(path, parent),
        "gpu_consumer": gpu_consumer,
        "system_component": system_component,
        "gpus_outside_scheduler": outside,
    }
    return copied(PodSpec, values)  # without __init__: a run over a cached set restores thousands


def _walk(
    node: Any,
    path: Path,
    parent: Mapping[str, Any],
    found: list[tuple[Path, Mapping[str, Any], Mapping[str, Any]]],
    budget: list[int],
) -> None:
    # Runs over every mapping and list of the input: scalars, nearly every value, are passed
    # over by their exact class before any isinstance against the Mapping ABC (which costs a
    # Python-level call each, a third of the walk).
    budget[0] -= 1
    if budget[0] < 0 or len(path) > MAX_DEPTH:
        return
    if node.__class__ is dict or isinstance(node, Mapping):
        if _is_pod_spec(node):
            found.append((path, node, _template_metadata(path, parent)))
            return  # a pod spec holds no other pod spec
        for key, value in node.items():
            if value.__class__ not in _SCALARS and key not in _SKIPPED_KEYS and isinstance(value, (Mapping, list)):
                _walk(value, (*path, str(key)), node, found, budget)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            if item.__class__ not in _SCALARS and isinstance(item, (Mapping, list)):
                _walk(item, (*path, index), parent, found, budget)


def _is_pod_spec(node: Mapping[str, Any]) -> bool:
    containers = node.get("containers")
    return (
        isinstance(containers, list)
        and bool(containers)
        and all(c.__class__ is dict or isinstance(c, Mapping) for c in containers)
        and any("image" in c or "name" in c for c in containers)
    )


def _template_metadata(path: Path, parent: Mapping[str, Any]) -> Mapping[str, Any]:
    """The metadata beside a ``spec`` key: a template's, or the Pod's own."""
    metadata = parent.get("metadata") if path and path[-1] == "spec" else None
    return metadata if isinstance(metadata, Mapping) else {}


# --- accessors -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelTest:
    """One node label condition: a nodeSelector entry or a node affinity expression."""

    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist | Gt | Lt
    values: tuple[str, ...]
    path: Path  # the nodeSelector key, or the expression's ``key``
    term: int | None  # index of the required nodeSelectorTerm (OR'd); None for nodeSelector
    required: bool  # False for preferred affinity

    @property
    def selects(self) -> bool:
        """Whether the test asks for nodes that have the label (not for its absence)."""
        return self.operator in ("In", "Exists", "Gt", "Lt")


def node_label_tests(pod: PodSpec) -> tuple[LabelTest, ...]:
    """The pod's node label conditions: nodeSelector entries, then required and preferred
    affinity expressions (read once per pod spec: several rules ask)."""
    return pod.derived(_node_label_tests)


def _node_label_tests(pod: PodSpec) -> tuple[LabelTest, ...]:
    return tuple(_label_tests(pod))


def _label_tests(pod: PodSpec) -> Iterator[LabelTest]:
    selector = pod.spec.get("nodeSelector")
    if isinstance(selector, Mapping):
        for key, value in selector.items():
            path = (*pod.path, "nodeSelector", key)
            yield LabelTest(str(key), "In", (label_value(value),), path, None, True)
    affinity = _mapping(_mapping(pod.spec.get("affinity")).get("nodeAffinity"))
    affinity_path = (*pod.path, "affinity", "nodeAffinity")
    required_key = "requiredDuringSchedulingIgnoredDuringExecution"
    terms = _mapping(affinity.get(required_key)).get("nodeSelectorTerms")
    for index, term in enumerate(terms if isinstance(terms, list) else ()):
        term_path = (*affinity_path, required_key, "nodeSelectorTerms", index)
        yield from _expressions(term, term_path, index, required=True)
    preferred_key = "preferredDuringSchedulingIgnoredDuringExecution"
    preferred = affinity.get(preferred_key)
    preferred_path = (*affinity_path, preferred_key)
    for index, item in enumerate(preferred if isinstance(preferred, list) else ()):
        preference = _mapping(item).get("preference")
        yield from _expressions(preference, (*preferred_path, index, "preference"), None, required=False)


def _expressions(term: Any, path: Path, index: int | None, *, required: bool) -> Iterator[LabelTest]:
    expressions = _mapping(term).get("matchExpressions")
    for position, expression in enumerate(expressions if isinstance(expressions, list) else ()):
        if not isinstance(expression, Mapping) or not isinstance(expression.get("key"), str):
            continue
        values = expression.get("values")
        values = tuple(label_value(v) for v in values) if isinstance(values, list) else ()
        yield LabelTest(
            expression["key"],
            str(expression.get("operator", "")),
            values,
            (*path, "matchExpressions", position, "key"),
            index,
            required,
        )


def label_value(value: Any) -> str:
    """A node label's value as a selector compares it (YAML's true is the label "true")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class HostPathVolume:
    """A hostPath volume of a pod spec and how its containers mount it."""

    name: str
    host_path: str
    path: Path  # path of ``hostPath.path`` (or of the volume when it has none)
    read_only: bool  # every mount of it is readOnly (True when nothing mounts it)


def host_path_volumes(pod: PodSpec) -> Iterator[HostPathVolume]:
    volumes = pod.spec.get("volumes")
    if not isinstance(volumes, list):
        return
    mounts = [
        mount
        for container in pod.containers()
        for mount in (container.data.get("volumeMounts") or ())
        if isinstance(mount, Mapping)
    ]
    mounted = {mount.get("name") for mount in mounts}
    writable = {mount.get("name") for mount in mounts if mount.get("readOnly") is not True}
    for index, volume in enumerate(volumes):
        host = _mapping(volume).get("hostPath") if isinstance(volume, Mapping) else None
        if not isinstance(host, Mapping) or not isinstance(host.get("path"), str):
            continue
        name = str(volume.get("name", ""))
        if name not in mounted:
            continue  # declared, mounted by no container: it reaches nothing
        yield HostPathVolume(
            name, host["path"], (*pod.path, "volumes", index, "hostPath", "path"), name not in writable
        )


def subject(pod: PodSpec, container: Container | None = None) -> str:
    """How a message names what it is about: ``Deployment serving/vllm, container vllm``."""
    if container is None:
        return str(pod.resource.ref)
    kind = {"initContainers": "init container", "ephemeralContainers": "ephemeral container"}
    return f"{pod.resource.ref}, {kind.get(container.group, 'container')} {container.name}"
