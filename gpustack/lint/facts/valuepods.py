"""Pod specs built from chart values, for charts whose values describe their pods.

bjw-s app-template (``controllers.<name>.containers.<name>``, ``controllers.<name>.pod``,
``defaultPodOptions``, ``persistence``) is how most GPU apps of home labs are deployed; the
k8s-at-home common library keeps one workload in top-level keys. ``data/value-pods.yaml``
says, per chart, where its values hold containers and pod options; this module builds from a
release's values the workload that the chart would render, as a ``Resource`` of its own, so
every pod rule checks it as it checks a manifest.

Each built object remembers where its parts come from (``_Origins``): a finding at a path of
the built object is located at the values key it comes from (in the HelmRelease, Argo CD
Application, … that sets it), and a rule's edit is applied there, where the field is copied
unchanged into the pod (``runtimeClassName``, ``securityContext``, …) and the values are a
mapping in the file (not a YAML string). Fields the chart converts (``image`` from a mapping,
``env`` from a mapping) are located but never edited.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpustack.lint.facts.claims import ClaimIndex
from gpustack.lint.facts.valueshapes import Shape, chart_shapes
from gpustack.lint.model import Path, PodSpec, Resource, get_value, scalar_text
from gpustack.lint.releases.helmvalues import ValuesLayer
from gpustack.lint.releases.release import HelmChartRelease

_KINDS: Mapping[str, tuple[str, str, Path]] = {  # controller type -> apiVersion, kind, pod spec path
    "deployment": ("apps/v1", "Deployment", ("spec", "template", "spec")),
    "statefulset": ("apps/v1", "StatefulSet", ("spec", "template", "spec")),
    "daemonset": ("apps/v1", "DaemonSet", ("spec", "template", "spec")),
    "job": ("batch/v1", "Job", ("spec", "template", "spec")),
    "cronjob": ("batch/v1", "CronJob", ("spec", "jobTemplate", "spec", "template", "spec")),
}
# Container keys the charts convert or do not pass on as they are.
_CONTAINER_SKIPPED = frozenset({"image", "env", "probes", "dependsOn", "enabled", "nameOverride", "order"})
_POD_METADATA = ("labels", "annotations")
PLACEMENT_KEYS = ("nodeSelector", "affinity")


def value_workloads(release: HelmChartRelease) -> list[Resource]:
    """The workloads ``release`` renders from its values, for a chart ``data/value-pods.yaml``
    describes; [] for any other chart."""
    shapes = chart_shapes().get(release.chart)
    home = _home_layer(release) if shapes else None
    if not shapes or home is None:
        return []
    for shape in shapes:
        if not shape.controllers:
            return list(_single(release, home, shape))
        controllers = get_value(release.values, *shape.controllers)
        if isinstance(controllers, Mapping):
            return list(_controllers(release, home, shape, controllers))
    return []


def value_pod_specs(release: HelmChartRelease, claims: ClaimIndex | None = None) -> list[PodSpec]:
    from gpustack.lint.facts.podspec import extract_pod_specs

    return [pod for workload in value_workloads(release) for pod in extract_pod_specs(workload, claims)]


def placement_pod_specs(release: HelmChartRelease, keys: tuple[str, ...] = PLACEMENT_KEYS) -> Iterator[PodSpec]:
    """A release's top-level ``keys`` (most charts copy ``nodeSelector`` and ``affinity`` into
    their pods) read as pod specs, for their paths: one per object and place that sets them."""
    found: dict[tuple[int, Path], tuple[Resource, dict[str, Any]]] = {}
    for key in keys:
        value = get_value(release.values, key)
        resource, path = release.where(key)
        if isinstance(value, Mapping) and path[-1:] == (key,):
            found.setdefault((id(resource), path[:-1]), (resource, {}))[1][key] = value
    for (_, parent), (resource, spec) in found.items():
        yield PodSpec(resource, parent, spec, {}, gpu_consumer=False, system_component=True)


def _home_layer(release: HelmChartRelease) -> ValuesLayer | None:
    """The highest-precedence values layer of the release's own object: where findings point."""
    own = [layer for layer in release.layers if layer.resource is release.resource and layer.written is None]
    return own[-1] if own else None


# --- where the parts of a built object come from -------------------------------------------


class _Origins:
    """Prefixes of paths in a built object -> the values keys they come from; ``exact``: the
    subtree is copied unchanged, so a path below maps key for key (and may be edited)."""

    def __init__(self, root: Path) -> None:
        self.entries: dict[Path, tuple[Path, bool]] = {(): (root, False)}

    def add(self, built: Path, values: Path, *, exact: bool) -> None:
        self.entries[built] = (values, exact)

    def values_path(self, path: Path) -> tuple[Path, bool]:
        for length in range(len(path), -1, -1):
            found = self.entries.get(path[:length])
            if found is not None:
                values, exact = found
                return ((*values, *path[length:]) if exact else values), exact
        raise AssertionError("the root is always mapped")


def _built(release: HelmChartRelease, home: ValuesLayer, data: dict[str, Any], origins: _Origins) -> Resource:
    source = home.resource
    editable = isinstance(source.get(home.path, {}), Mapping)

    def locate(path: Path) -> tuple[int, int]:
        return source.locate((*home.path, *origins.values_path(path)[0]))

    def origin(path: Path) -> Path | None:
        values, exact = origins.values_path(path)
        return (*home.path, *values) if exact and editable else None

    return Resource(
        file=source.file,
        data=data,
        locator=locate,
        document=source.document,
        document_path=source.document_path,
        origin=origin,
    )


def _document(release: HelmChartRelease, shape: Shape, source: Mapping[str, Any], name: str) -> tuple[dict[str, Any], Path]:
    """The workload's object without its pod: kind, name, namespace and, for a Deployment, its
    replicas and update strategy as the chart renders them (``source``: the controller's values,
    or the release's values for a single-workload chart)."""
    kind_type = get_value(source, *shape.type)
    api_version, kind, pod_path = _KINDS.get(str(kind_type).lower() if kind_type else "deployment", _KINDS["deployment"])
    metadata: dict[str, Any] = {"name": name}
    # The namespace the release installs into: a K3s HelmChart's or Flux HelmRelease's
    # targetNamespace, an Argo CD Application's destination, else the declaring object's own.
    namespace = (release.resource.get(("spec", "targetNamespace")) or release.resource.get(("spec", "destination", "namespace"))
                 or release.resource.ref.namespace)
    if isinstance(namespace, str):
        metadata["namespace"] = namespace
    data: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": metadata, "spec": {}}
    if kind == "Deployment":
        replicas = get_value(source, *shape.replicas) if shape.replicas else None
        if replicas is not None:
            data["spec"]["replicas"] = replicas
        strategy = get_value(source, *shape.strategy)
        strategy = strategy if isinstance(strategy, str) else shape.default_strategy
        if strategy:
            data["spec"]["strategy"] = {"type": strategy}
        rolling = get_value(source, *shape.rolling_update) if shape.rolling_update else None
        if strategy == "RollingUpdate" and isinstance(rolling, Mapping):
            limits = {"maxUnavailable": rolling.get("unavailable"), "maxSurge": rolling.get("surge")}
            if any(value is not None for value in limits.values()):
                data["spec"]["strategy"]["rollingUpdate"] = {k: v for k, v in limits.items() if v is not None}
    return data, pod_path


def _place(data: dict[str, Any], path: Path, value: Any) -> None:
    node = data
    for step in path[:-1]:
        node = node.setdefault(step, {})
    node[path[-1]] = value


# --- bjw-s common 2.x and later: controllers ------------------------------------------------


def _controllers(
    release: HelmChartRelease, home: ValuesLayer, shape: Shape, controllers: Mapping[str, Any]
) -> Iterator[Resource]:
    enabled = {name: item for name, item in controllers.items() if isinstance(item, Mapping) and item.get("enabled") is not False}
    defaults = get_value(release.values, *shape.default_pod)
    defaults = defaults if isinstance(defaults, Mapping) else {}
    fullname = release.release or release.resource.ref.name or release.chart
    for name, controller in enabled.items():
        root = (*shape.controllers, name)
        single = len(enabled) == 1 or name == "main"
        data, pod_path = _document(release, shape, controller, fullname if single else f"{fullname}-{name}")
        origins = _Origins(root)
        origins.add(("spec", "strategy"), (*root, *shape.strategy), exact=False)
        own = get_value(controller, *shape.pod)
        own = own if isinstance(own, Mapping) else {}
        pod: dict[str, Any] = {}
        origins.add(pod_path, (*root, *shape.pod), exact=True)  # a key set nowhere goes to the controller's pod
        for key, value in {**defaults, **own}.items():
            if key in _POD_METADATA:
                continue
            pod[key] = value
            where = (*root, *shape.pod, key) if key in own else (*shape.default_pod, key)
            origins.add((*pod_path, key), where, exact=True)
        metadata = {key: own.get(key, defaults.get(key)) for key in _POD_METADATA if own.get(key, defaults.get(key))}
        for group, keys in shape.containers.items():
            items = get_value(controller, *keys)
            containers = [(n, c) for n, c in items.items() if isinstance(c, Mapping) and c.get("enabled") is not False] \
                if isinstance(items, Mapping) else []
            if containers:
                pod[group] = [
                    _container(
                        cname, item, (*pod_path, group, index), (*root, *keys, cname), origins,
                        _Probes(shape, _probes_on(release, shape, name, cname)),
                    )
                    for index, (cname, item) in enumerate(containers)
                ]
        _persistence(release, shape, name, pod, pod_path, origins)
        _place(data, pod_path, pod)
        if metadata:
            _place(data, (*pod_path[:-1], "metadata"), metadata)
        yield _built(release, home, data, origins)


def _container(
    name: str, item: Mapping[str, Any], path: Path, root: Path, origins: _Origins, probes: _Probes
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name}
    origins.add(path, root, exact=True)
    for key, value in item.items():
        if key not in _CONTAINER_SKIPPED:
            container[key] = [value] if key in ("command", "args") and isinstance(value, str) else value
    for probe, (spec, where) in probes.rendered(item, root).items():
        container[probe] = spec
        origins.add((*path, probe), where, exact=False)
    image = _image(item.get("image"))
    if image:
        container["image"] = image
        origins.add((*path, "image"), (*root, "image"), exact=False)
    env = _env(item.get("env"), (*path, "env"), (*root, "env"), origins)
    if env:
        container["env"] = env
    return container


@dataclass(frozen=True)
class _Probes:
    """Where a container's probe settings sit (``probes.<name>``) and whether the chart enables
    them when the user's values leave ``enabled`` out."""

    shape: Shape
    on_by_default: bool

    def rendered(self, item: Mapping[str, Any], root: Path) -> dict[str, tuple[dict[str, Any], Path]]:
        """``readinessProbe`` → (the probe as bjw-s common renders it, the values key it comes from)."""
        if not self.shape.probes:
            return {}
        settings = get_value(item, *self.shape.probes)
        settings = settings if isinstance(settings, Mapping) else {}
        found: dict[str, tuple[dict[str, Any], Path]] = {}
        for name in ("liveness", "readiness", "startup"):
            probe = settings.get(name)
            probe = probe if isinstance(probe, Mapping) else {}
            if probe.get("enabled", self.on_by_default) is not True:
                continue
            where = (*root, *self.shape.probes, name) if name in settings else root
            found[f"{name}Probe"] = (_probe_spec(probe), where)
        return found


def _probe_spec(probe: Mapping[str, Any]) -> dict[str, Any]:
    """The probe bjw-s common renders: ``spec`` as it is with ``custom: true``; else ``command``
    (when ``type`` is unset or AUTO), or a check of ``type`` (TCP when unset; AUTO follows the
    primary service, taken as TCP here) on ``port`` (the primary service's port when unset)."""
    spec = probe.get("spec")
    if probe.get("custom") is True and isinstance(spec, Mapping):
        return dict(spec)
    kind = str(probe.get("type") or "").upper()
    if "command" in probe and kind in ("", "AUTO"):
        return {"exec": {"command": probe["command"]}}
    check = {"HTTP": "httpGet", "HTTPS": "httpGet", "GRPC": "grpc"}.get(kind, "tcpSocket")
    keys = ("path", "port") if check == "httpGet" else ("port",)
    return {check: {key: probe[key] for key in keys if key in probe}}


def _probes_on(release: HelmChartRelease, shape: Shape, controller: str | None, container: str | None) -> bool:
    """Whether the chart's own values enable this container's probes (``probesOn``): by name,
    below a chart major; a release of unknown version is taken to be below it."""
    on = shape.probes_on
    if on is None:
        return False
    if any(key in on and on[key] != name for key, name in (("controller", controller), ("container", container))):
        return False
    before = on.get("before")
    major = re.match(r"\D*(\d+)", release.version or "")
    return before is None or major is None or int(major.group(1)) < int(before)


def _image(image: Any) -> str | None:
    """``{repository, tag, digest}`` as the charts join it; a string as it is."""
    if isinstance(image, str):
        return image
    if not isinstance(image, Mapping) or not isinstance(image.get("repository"), str):
        return None
    text = image["repository"]
    if image.get("tag") not in (None, ""):
        text += f":{image['tag']}"
    if isinstance(image.get("digest"), str) and image["digest"]:
        text += f"@{image['digest']}"
    return text


def _env(env: Any, path: Path, root: Path, origins: _Origins) -> list[Any]:
    """A list of env vars as they are; a mapping ``NAME: value`` (or ``NAME: {value|valueFrom}``)
    as the charts render it."""
    if isinstance(env, list):
        origins.add(path, root, exact=True)
        return env
    if not isinstance(env, Mapping):
        return []
    origins.add(path, root, exact=False)
    items: list[Any] = []
    for index, (name, value) in enumerate(env.items()):
        origins.add((*path, index), (*root, name), exact=False)
        if isinstance(value, Mapping):
            item = {"name": name, **value} if "value" in value or "valueFrom" in value else {"name": name, "valueFrom": value}
        else:
            item = {"name": name, "value": "" if value is None else scalar_text(value)}
        items.append(item)
    return items



def _persistence(
    release: HelmChartRelease, shape: Shape, controller: str | None, pod: dict[str, Any], pod_path: Path, origins: _Origins
) -> None:
    """hostPath, emptyDir (``/dev/shm``) and existing claim volumes, mounted as ``globalMounts`` /
    ``advancedMounts`` (controllers shape) or ``mountPath`` (single shape) say; other volume
    types matter to no GPU rule."""
    persistence = get_value(release.values, *shape.persistence)
    if not isinstance(persistence, Mapping):
        return
    volumes: list[Any] = []
    for name, item in persistence.items():
        volume = _volume(name, item)
        if volume is None:
            continue
        index = len(volumes)
        where = (*shape.persistence, name)
        volumes.append(volume)
        origins.add((*pod_path, "volumes", index), where, exact=False)
        if "hostPath" in volume:
            origins.add((*pod_path, "volumes", index, "hostPath", "path"), (*where, "hostPath"), exact=False)
        for group, position, mount, mount_where in _mounts(name, item, where, controller, pod):
            container = pod[group][position]
            mounts = container.setdefault("volumeMounts", [])
            origins.add((*pod_path, group, position, "volumeMounts", len(mounts)), mount_where, exact=False)
            mounts.append(mount)
    if volumes:
        pod["volumes"] = volumes


def _volume(name: str, item: Any) -> dict[str, Any] | None:
    """The pod volume of one enabled ``persistence`` entry of a type a rule reads."""
    if not isinstance(item, Mapping) or item.get("enabled") is False:
        return None
    if item.get("type") == "hostPath" and isinstance(item.get("hostPath"), str):
        return {"name": name, "hostPath": {"path": item["hostPath"]}}
    claim = item.get("existingClaim")
    if item.get("type", "persistentVolumeClaim") == "persistentVolumeClaim" and isinstance(claim, str) and claim:
        return {"name": name, "persistentVolumeClaim": {"claimName": claim}}
    if item.get("type") == "emptyDir":
        medium = item.get("medium")
        return {"name": name, "emptyDir": {"medium": medium} if isinstance(medium, str) else {}}
    return None


def _mounts(
    name: str, item: Mapping[str, Any], where: Path, controller: str | None, pod: Mapping[str, Any]
) -> Iterator[tuple[str, int, dict[str, Any], Path]]:
    """(container group, index, volumeMount, values path) for each container that mounts it."""
    targets = [(group, i, c["name"]) for group in ("containers", "initContainers") for i, c in enumerate(pod.get(group) or ())]
    if controller is None:  # single shape: the main container
        path = item.get("mountPath") if isinstance(item.get("mountPath"), str) else f"/{name}"
        mount = {"name": name, "mountPath": path, "readOnly": item.get("readOnly") is True}
        yield from ((g, i, mount, where) for g, i, _ in targets[:1])
        return
    advanced = item.get("advancedMounts")
    global_mounts = item.get("globalMounts")
    if global_mounts is None and not isinstance(advanced, Mapping):
        global_mounts = [{"path": f"/{name}"}]
    for index, entry in enumerate(global_mounts if isinstance(global_mounts, list) else ()):
        if isinstance(entry, Mapping):
            for group, i, _ in targets:
                yield group, i, _mount(name, entry), (*where, "globalMounts", index)
    per_container = advanced.get(controller) if isinstance(advanced, Mapping) else None
    for group, i, cname in targets:
        entries = per_container.get(cname) if isinstance(per_container, Mapping) else None
        for index, entry in enumerate(entries if isinstance(entries, list) else ()):
            if isinstance(entry, Mapping):
                yield group, i, _mount(name, entry), (*where, "advancedMounts", controller, cname, index)


def _mount(name: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": name, "mountPath": str(entry.get("path") or f"/{name}"), "readOnly": entry.get("readOnly") is True}


# --- one workload from top-level keys -------------------------------------------------------


def _single(release: HelmChartRelease, home: ValuesLayer, shape: Shape) -> Iterator[Resource]:
    values = release.values
    if not isinstance(get_value(values, *shape.container_fields.get("image", ("image",))), Mapping):
        return  # not this shape's values (no main container image)
    if get_value(values, *shape.type[:-1], "enabled") is False:
        return
    fullname = release.release or release.resource.ref.name or release.chart
    data, pod_path = _document(release, shape, values, fullname)
    origins = _Origins(())
    origins.add(("spec", "strategy"), shape.strategy, exact=False)
    origins.add(pod_path, (), exact=False)
    pod: dict[str, Any] = {}
    for key, keys in shape.pod_fields.items():
        value = get_value(values, *keys)
        origins.add((*pod_path, key), keys, exact=True)
        if value is not None:
            pod[key] = value
    item = {key: value for key, keys in shape.container_fields.items() if (value := get_value(values, *keys)) is not None}
    container_path = (*pod_path, "containers", 0)
    if shape.probes:  # top-level: where the built container reads them (``probes``)
        item["probes"] = get_value(values, *shape.probes)
    container = _container(fullname, item, container_path, (), origins, _Probes(shape, _probes_on(release, shape, None, None)))
    origins.entries[container_path] = ((), False)  # the container's fields are spread over the values root
    for key, keys in shape.container_fields.items():
        if key not in ("image", "env"):
            origins.add((*container_path, key), keys, exact=True)
    pod["containers"] = [container]
    _persistence(release, shape, None, pod, pod_path, origins)
    _place(data, pod_path, pod)
    yield _built(release, home, data, origins)

